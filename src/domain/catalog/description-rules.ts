/** @module Tool-poisoning rules (C3) as data: what the description scanner flags, and why. */

import { LANGUAGE_PHRASES, LANGUAGE_SHAPES, type LanguageShape } from './description-languages.js';

export type DescriptionRuleCategory =
  | 'instruction'
  | 'invisible-unicode'
  | 'hidden-markup'
  | 'url'
  | 'secret-access'
  | 'sensitive-file'
  | 'tool-reference';

/** Inclusive code-point range. */
export type CodePointRange = readonly [number, number];

interface RuleBase {
  readonly id: string;
  readonly category: DescriptionRuleCategory;
  /** Shown to admins as the finding's message, so it says what the text does, not how we matched. */
  readonly description: string;
}

/** Context in which otherwise-flagged code points are ordinary orthography. */
export interface CodePointExemption {
  readonly codePoints: readonly number[];
  /** RegExp source (with `u`) one code point immediately before must match. */
  readonly before: string;
  /** RegExp source (with `u`) one code point immediately after must match. */
  readonly after: string;
}

/** Flags code points in the raw text, before any normalization could hide them. */
export interface CodePointRule extends RuleBase {
  readonly kind: 'codepoints';
  readonly ranges: readonly CodePointRange[];
  readonly exemptions?: readonly CodePointExemption[];
  /** RegExp sources (with `u`) of whole sequences that are ordinary text, e.g. emoji flags. */
  readonly exemptSequences?: readonly string[];
  /** Tag characters mirror ASCII, so the hidden text can be shown to admins and scanned too. */
  readonly decode?: 'tags';
}

export interface PatternRule extends RuleBase {
  readonly kind: 'pattern';
  /** `normalized`: NFKC, invisibles stripped, look-alikes folded, lower-cased, whitespace collapsed. */
  readonly target: 'normalized' | 'raw';
  readonly pattern: string;
  /** Defaults to `u`; the scanner adds `g`. */
  readonly flags?: string;
  /** RegExp source that must also match inside the same sentence as the main pattern. */
  readonly alsoInSentence?: string;
  /**
   * Values of the first participating capture group that make a match harmless (determiners such
   * as "this" in "use this tool"); the tool's own name is always ignored as well.
   */
  readonly ignoreCaptures?: readonly string[];
  /**
   * RegExp source (with `u`): a first participating capture it matches makes the match harmless,
   * like `ignoreCaptures` but for a family of names (an argument named for a secret takes one).
   */
  readonly ignoreCapturePattern?: string;
  /** Variation selectors can carry one byte each; decoding shows admins the smuggled text. */
  readonly decode?: 'variation-selectors';
  /**
   * A match whose first link goes to one of the tool's own hosts (egress hosts, its http
   * runtime's or provider's host) or to a documentation host its owner declares is not a
   * finding: naming that host sends the model nowhere new.
   */
  readonly exemptOwnHosts?: boolean;
  /**
   * The match is a link, judged by its shape: a plain http(s) location is not a finding on any
   * host (a documentation link); a slot for the model to fill, credentials, a query naming the
   * data it carries, or any query to an undeclared host is (the scanner's `linkProblem`).
   */
  readonly link?: boolean;
}

/** Latin words with Cyrillic/Greek look-alike letters spliced in. */
export interface ConfusableRule extends RuleBase {
  readonly kind: 'confusable';
}

export type DescriptionRule = CodePointRule | PatternRule | ConfusableRule;

// ---------------------------------------------------------------------------------------------
// Code-point sets shared by the rules, normalization and excerpt escaping.

const ZERO_WIDTH: readonly CodePointRange[] = [
  [0x200b, 0x200d],
  [0x2060, 0x2060],
  [0xfeff, 0xfeff],
];

const BIDI_CONTROLS: readonly CodePointRange[] = [
  [0x061c, 0x061c],
  [0x200e, 0x200f],
  [0x202a, 0x202e],
  [0x2066, 0x2069],
];

const TAG_CHARACTERS: readonly CodePointRange[] = [[0xe0000, 0xe007f]];

/** Format and filler characters that render as nothing (or as blank space) in most UIs. */
const INVISIBLE_FORMAT: readonly CodePointRange[] = [
  [0x00ad, 0x00ad],
  [0x034f, 0x034f],
  [0x115f, 0x1160],
  [0x17b4, 0x17b5],
  [0x180e, 0x180e],
  [0x2061, 0x2064],
  [0x206a, 0x206f],
  [0x2800, 0x2800],
  [0x3164, 0x3164],
  [0xffa0, 0xffa0],
  [0xfff9, 0xfffb],
  [0x1bca0, 0x1bca3],
  [0x1d173, 0x1d17a],
];

/** C0/C1 controls other than tab, LF and CR: ANSI escapes can rewrite what a terminal shows. */
const CONTROL_CHARACTERS: readonly CodePointRange[] = [
  [0x0000, 0x0008],
  [0x000b, 0x000c],
  [0x000e, 0x001f],
  [0x007f, 0x009f],
];

/** Not flagged one at a time (emoji use VS16), but never meaningful to the rules either. */
const VARIATION_SELECTORS: readonly CodePointRange[] = [
  [0x180b, 0x180d],
  [0x180f, 0x180f],
  [0xfe00, 0xfe0f],
  [0xe0100, 0xe01ef],
];

/** Removed before text rules run, so "ig\u200Bnore" still reads as "ignore". */
export const NORMALIZATION_STRIP_RANGES: readonly CodePointRange[] = [
  ...ZERO_WIDTH,
  ...BIDI_CONTROLS,
  ...TAG_CHARACTERS,
  ...INVISIBLE_FORMAT,
  ...CONTROL_CHARACTERS,
  ...VARIATION_SELECTORS,
];

/** Shown as `<U+XXXX>` in excerpts so an admin sees what a browser would hide or reorder. */
export const EXCERPT_ESCAPE_RANGES: readonly CodePointRange[] = [
  ...NORMALIZATION_STRIP_RANGES,
  [0x2028, 0x2029],
];

/**
 * Cyrillic and Greek letters that look like Latin ones (after lower-casing). Folded only inside
 * words that also contain Latin letters, so genuine Russian or Greek prose is left alone.
 */
export const CONFUSABLE_LETTERS: Readonly<Record<string, string>> = {
  а: 'a',
  в: 'b',
  е: 'e',
  ё: 'e',
  к: 'k',
  м: 'm',
  н: 'h',
  о: 'o',
  р: 'p',
  с: 'c',
  т: 't',
  у: 'y',
  х: 'x',
  ѕ: 's',
  і: 'i',
  ї: 'i',
  ј: 'j',
  ԁ: 'd',
  ԛ: 'q',
  ԝ: 'w',
  һ: 'h',
  ӏ: 'l',
  α: 'a',
  ε: 'e',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
};

/** Scripts that write ZWJ/ZWNJ as part of ordinary spelling (Persian, Indic conjuncts, …). */
const JOINER_SCRIPTS = String.raw`[\p{Script=Arabic}\p{Script=Syriac}\p{Script=Nko}\p{Script=Devanagari}\p{Script=Bengali}\p{Script=Gurmukhi}\p{Script=Gujarati}\p{Script=Oriya}\p{Script=Tamil}\p{Script=Telugu}\p{Script=Kannada}\p{Script=Malayalam}\p{Script=Sinhala}\p{Script=Khmer}\p{Script=Myanmar}]`;

// ---------------------------------------------------------------------------------------------
// Vocabulary for the text rules. All of it is matched against the normalized (lower-case) text.

/** Things whose disclosure is the point of an exfiltration instruction. */
const SECRET = String.raw`(?:api[\s_-]?keys?|secret[\s_-]?keys?|client[\s_-]?secrets?|secrets?|passwords?(?![\s-]*(?:reset|recovery|policy|policies|strength|change|expir|requirement|rules|rotation|manager|less|protected|hash))|passphrases?|passcodes?|credentials?|creds|(?:access|auth|bearer|session|refresh|oauth|id|api|personal[\s_-]access|github|gitlab|slack|openai|aws|jwt)[\s_-]?tokens?|private[\s_-]?keys?|ssh[\s_-]?keys?|seed[\s_-]?phrases?|recovery[\s_-]?phrases?|mnemonic(?:\s+phrase)?s?|session[\s_-]?cookies?|auth(?:entication)?[\s_-]?cookies?|one[\s-]time[\s-](?:codes?|passwords?)|(?:2fa|mfa|otp)[\s_-]?codes?|credit[\s_-]?card(?:[\s_-]?numbers?)?|bank[\s_-]?(?:account[\s_-]?)?(?:details|numbers?|info(?:rmation)?|credentials|logins?)|card[\s_-]?numbers?|cvv|(?:bank|card|atm|debit|credit|sim)[\s_-]?pins?|pin[\s_-](?:codes?|numbers?)|social[\s_-]security[\s_-]numbers?|(?<![a-z0-9_])[a-z0-9]+_(?:[a-z0-9]+_)*(?:api_?key|secret(?:_access)?(?:_key)?|password|passwd|access_token|auth_token|bot_token|private_key)|(?<![a-z0-9_])(?:github|gh|gitlab|slack|hf|openai|anthropic|npm|pypi|discord|telegram|stripe)_[a-z_]*token)\b`;

/** A secret named like an environment variable: OPENAI_API_KEY, AWS_SECRET_ACCESS_KEY, BOT_TOKEN. */
const SNAKE_SECRET = String.raw`(?<![a-z0-9_])[a-z0-9]+_(?:[a-z0-9]+_)*(?:api_?key|secret(?:_access)?(?:_key)?|password|passwd|token|private_key)\b`;

/** Weaker than SECRET: harmless to pass around, alarming when shipped to a side channel. */
const ENVIRONMENT = String.raw`(?:environment\s+variables?|env\s+vars?|process\.env|os\.environ|printenv|output\s+of\s+[\x60'"]?(?:env|set|export\s+-p)\b)\b`;

/** Verbs that move data out of the conversation; base forms only, so tool self-descriptions
 *  ("sends a reset link") read differently from imperatives aimed at the model. */
const EXFIL_VERB = String.raw`\b(?:send|post|upload|include|pass|append|attach|forward|transmit|reveal|disclose|share|paste|embed|email|relay|submit|leak|exfiltrate|smuggle|steal|harvest|encode|dump|provide|hand\s+over)\b`;

/** With a side channel named in the same sentence, even neutral verbs move data out. */
const MOVE_VERB = String.raw`\b(?:send|post|upload|include|pass|append|attach|forward|transmit|reveal|disclose|share|paste|embed|email|relay|submit|leak|exfiltrate|smuggle|encode|dump|provide|print|output|write|put|insert|place|copy|add|echo|store|save|log)\b`;

/** An exfiltration verb preceded by a negation ("never send the password") is guidance, not attack. */
const NOT_NEGATED = String.raw`(?<!(?:\bnever|\bnot|n't|\bno|\bwithout)\s+(?:\w+\s+)?)`;

/** Whose secrets: quantifiers and third parties make "send the key" into "send their keys". */
const POSSESSOR = String.raw`(?:the\s+)?(?:user'?s|users'|their|his|her|any|every|all(?:\s+(?:of\s+)?(?:the|their|his|her))?|other\s+(?:users?|people)'?s?)`;
const POSSESSIVE = String.raw`${POSSESSOR}\s+`;

/** Where stolen data goes: somewhere outside, or a tool argument nobody looks at. */
const SIDE_CHANNEL = String.raw`(?:https?:|ftp:|\bwww\.|webhook|\bendpoint\b|\bto\s+(?:me|us)\b|(?<![a-z0-9._%+-])[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}|\battacker|\b(?:side[\s_-]?notes?|notes?|comments?|metadata|annotations?|hidden|extra|debug|context|feedback|audit|memo)[\x60'"]?\s+(?:field|parameter|param|argument|arg|property|key|variable)\b|\b(?:as|in|into|inside)\s+(?:the\s+|a\s+)?[\x60'"]?(?:side[\s_-]?notes?|notes|comment|metadata|feedback|annotation|debug_info|extra|memo)\b)`;

/**
 * A secret that is not this tool's own to ask for: the environment, a variable-named secret,
 * someone's (or every) secret, another service's key. "Provide the secret value in `value`" is a
 * vault tool's input; "pass the user's GitHub token in `notes`" is the attack.
 */
const FOREIGN_SECRET = String.raw`(?:\b${ENVIRONMENT}|${SNAKE_SECRET}|\b${POSSESSIVE}(?:[\w-]+\s+){0,2}?${SECRET}|\b(?:aws|github|gitlab|openai|anthropic|slack|stripe|google|azure|gcp|ssh|npm|pypi|database|db|admin|root|system|cloud|other)\s+(?:[\w-]+\s+)?${SECRET}|\b(?:secrets?|keys?|tokens?|credentials|passwords?)\s+(?:from|in|of)\s+(?:the\s+|your\s+)?(?:environment|env\b|\.env|config|keychain|disk|home|~|\/)|\b(?:read|dump|collect|list|capture)\s+(?:the\s+|your\s+|whole\s+|entire\s+)?environment\b)`;

/** Demands addressed to the model. */
const OBLIGATION = String.raw`(?:\b(?:you|(?:the\s+)?(?:assistant|model|ai|agent|llm))\s+(?:must|should|needs?\s+to|has\s+to|have\s+to|are\s+required\s+to|is\s+required\s+to|will\s+need\s+to)|\bmake\s+sure\s+(?:to|you)|\bbe\s+sure\s+to|\b(?:do\s+not|don't)\s+forget\s+to|\bremember\s+to|\bit\s+is\s+(?:very\s+|extremely\s+|absolutely\s+)?(?:important|critical|crucial|essential|mandatory|required)\s+(?:to|that)|\balways|\bbefore\s+(?:using|calling|invoking|running)\s+(?:this|the|any)\s+(?:[\w-]+\s+)?(?:tool|function)s?\b,?)`;

/** Places an attacker wants secrets read from on their behalf. */
const SECRET_SOURCE = String.raw`\bfrom\s+(?:the\s+|your\s+|their\s+)?(?:environment|env\b|process\.env|os\.environ|disk|home\s+director|~|\/|keychain|browser|password\s+manager|\.env)`;

const READ_VERB = String.raw`\b(?:read|access|retrieve|grab|fetch|extract|collect|locate|look\s+up|search\s+for|cat|open|load|copy|gather|dump|steal|harvest)\b`;

/** Placeholders that turn "use the X tool" back into ordinary prose. */
const NOT_A_TOOL_NAME: readonly string[] = [
  'a',
  'an',
  'the',
  'this',
  'that',
  'these',
  'those',
  'same',
  'other',
  'another',
  'any',
  'each',
  'every',
  'appropriate',
  'right',
  'correct',
  'relevant',
  'proper',
  'suitable',
  'applicable',
  'respective',
  'corresponding',
  'matching',
  'following',
  'above',
  'below',
  'next',
  'previous',
  'given',
  'specified',
  'selected',
  'current',
  'underlying',
  'original',
  'new',
  'your',
  'my',
  'our',
  'their',
  'its',
  'which',
  'what',
  'whichever',
  'one',
  'single',
  'separate',
  'dedicated',
  'specific',
  'provided',
  'available',
  'same-named',
];

/** A tool name as written in prose, optionally quoted; captured for the own-name check. */
const TOOL_TOKEN = String.raw`[\x60'"]?([a-z0-9][\w.\-]*)[\x60'"]?`;

/** Tag names that only mean something to a language model. */
const PSEUDO_TAGS = String.raw`(?:important|system|system[\s_-]?(?:prompt|message|reminder|instructions?)|secret|hidden|instructions?|admin|critical|override|sys|inst|ai[\s_-]?instructions?|model[\s_-]?instructions?|assistant|developer|urgent|priority|attention|sudo|tool[\s_-]?(?:call|use)|function[\s_-]?call)`;

/** Elements whose only use inside a plain-text description is to hide or smuggle content. */
const HTML_ELEMENTS =
  '(?:a|abbr|b|body|br|button|center|details|dialog|div|em|embed|font|form|frame|h[1-6]|head|hr|html|i|iframe|img|input|label|link|marquee|meta|noscript|object|p|pre|s|script|small|source|span|strike|strong|style|sub|summary|sup|svg|table|tbody|td|template|textarea|th|title|tr|u|ul|ol|li|video|audio)';

/**
 * A tool id written in prose: snake_case, kebab-case or dotted (captured for the own-name check).
 * It starts only where an identifier starts and its pieces are bounded, so a long run of
 * identifier characters costs one attempt, not one per position.
 */
const TOOL_ID = String.raw`(?<![\w.-])[\x60'"]?([a-z][a-z0-9]{0,40}(?:[_.-][a-z0-9]{1,40}){1,8})(?![\w-])[\x60'"]?`;

/** Words that name the system or an administrator, in every language the rules know. */
const ROLE_WORDS = [
  'system',
  'sys',
  'admin',
  'administrator',
  'developer',
  'root',
  'operator',
  'assistant',
  'ai',
  'model',
  'llm',
  'agent',
  'override',
  'hidden',
  'secret',
  ...LANGUAGE_PHRASES.flatMap((l) => l.roleWords),
].join('|');
/** What may follow the role word in a banner: "SYSTEM NOTE", "ADMIN OVERRIDE", "系统消息". */
const BANNER_TAIL = String.raw`(?:[\s_-]?(?:note|notice|message|prompt|override|update|directive|instructions?|mode|block|section|alert|order|command|nachricht|hinweis|anweisung|消息|提示|指令|メッセージ|指示|сообщение|указание)){0,2}`;
/** A banner's rule: a run of two or more #, =, *, ~, +, <, > or of three or more - or _. */
const BANNER_RULE = String.raw`(?:[#=*~+<>]{2,12}|[-_]{3,12}|\[{2}|\({2}|【|「)`;
const BANNER_RULE_CLOSE = String.raw`(?:[#=*~+<>]{2,12}|[-_]{3,12}|\]{2}|\){2}|】|」)`;

/** Loan words that make a secret someone else's, in any language: env, .env, ssh, ~/, AWS_… */
const FOREIGN_SECRET_WORDS = String.raw`\b(?:env|environment|process\.env|os\.environ|ssh|aws|github|openai|stripe|slack|id_rsa|[a-z0-9]+_(?:api_key|secret|token|password|key))\b|\.env\b|~\/|\/etc\/`;

/**
 * JS `\b` is ASCII-only; the language rules need boundaries that know é, ü and Cyrillic. In
 * their sources a `\b` before a group (not a lookaround) or a letter starts a word and any
 * other ends one, so each
 * becomes one cheap lookaround rather than an alternation the engine cannot skip ahead with.
 */
function unicodeBoundaries(source: string): string {
  return source.replace(/\\b(?=(\((?!\?[=!<])|\p{L})?)/gu, (_b, starts: string | undefined) =>
    starts === undefined ? '(?![\\p{L}\\p{N}_])' : '(?<![\\p{L}\\p{N}_])',
  );
}

/** One rule per (language, shape): ids `<category>.<shape>.<lang>`, messages naming the language. */
function languageRules(): PatternRule[] {
  const rules: PatternRule[] = [];
  for (const language of LANGUAGE_PHRASES) {
    for (const [shape, sources] of Object.entries(language.shapes)) {
      const meta = LANGUAGE_SHAPES[shape as LanguageShape];
      if (!sources || sources.length === 0) continue;
      rules.push({
        id: `${meta.category}.${shape}.${language.lang}`,
        category: meta.category,
        kind: 'pattern',
        target: 'normalized',
        description: `${meta.description} (${language.name})`,
        pattern: sources.map(unicodeBoundaries).join('|'),
        ...(shape === 'secret-hand-over'
          ? {
              alsoInSentence: unicodeBoundaries(
                `${FOREIGN_SECRET_WORDS}|${language.foreignSecret}`,
              ),
            }
          : {}),
      });
    }
  }
  return rules;
}

// ---------------------------------------------------------------------------------------------

export const DESCRIPTION_RULES: readonly DescriptionRule[] = [
  // --- invisible-unicode: run on the raw text, because normalization deletes the evidence.
  {
    id: 'unicode.zero-width',
    category: 'invisible-unicode',
    kind: 'codepoints',
    description:
      'Contains zero-width characters, which are invisible to reviewers but read by the model',
    ranges: ZERO_WIDTH,
    exemptions: [
      { codePoints: [0x200c, 0x200d], before: JOINER_SCRIPTS, after: JOINER_SCRIPTS },
      {
        codePoints: [0x200d],
        before: String.raw`[\p{Extended_Pictographic}\p{Emoji_Modifier}\uFE0F]`,
        after: String.raw`\p{Extended_Pictographic}`,
      },
    ],
  },
  {
    id: 'unicode.bidi-control',
    category: 'invisible-unicode',
    kind: 'codepoints',
    description:
      'Contains bidirectional control characters, which can make text display in a different order than the model reads it',
    ranges: BIDI_CONTROLS,
  },
  {
    id: 'unicode.tag-characters',
    category: 'invisible-unicode',
    kind: 'codepoints',
    description: 'Contains Unicode tag characters, an invisible copy of ASCII used to smuggle text',
    ranges: TAG_CHARACTERS,
    // Subdivision flags (England, Scotland, Wales, …) are a black flag followed by tag letters.
    exemptSequences: [String.raw`\u{1F3F4}[\u{E0030}-\u{E0039}\u{E0061}-\u{E007A}]{2,6}\u{E007F}`],
    decode: 'tags',
  },
  {
    id: 'unicode.invisible-format',
    category: 'invisible-unicode',
    kind: 'codepoints',
    description:
      'Contains invisible formatting or filler characters (soft hyphen, invisible operators, Hangul or Braille blanks, …)',
    ranges: INVISIBLE_FORMAT,
  },
  {
    id: 'unicode.control-characters',
    category: 'invisible-unicode',
    kind: 'codepoints',
    description:
      'Contains control characters (e.g. ANSI escape sequences) that can hide or rewrite text in terminals and logs',
    ranges: CONTROL_CHARACTERS,
  },
  {
    // One selector after an emoji is normal; a run of them is a byte-per-character side channel.
    id: 'unicode.variation-selector-run',
    category: 'invisible-unicode',
    kind: 'pattern',
    target: 'raw',
    description: 'Contains a run of variation selectors, which can encode hidden bytes',
    pattern: String.raw`[\u180B-\u180D\u180F\uFE00-\uFE0F\u{E0100}-\u{E01EF}]{2,}`,
    decode: 'variation-selectors',
  },
  {
    id: 'unicode.mixed-script-confusable',
    category: 'invisible-unicode',
    kind: 'confusable',
    description:
      'Mixes Latin letters with look-alike Cyrillic or Greek letters, a way to dodge keyword filters',
  },

  // --- instruction: text aimed at the model rather than describing the tool.
  {
    id: 'instruction.ignore-previous',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Tells the model to ignore or override its previous instructions',
    pattern: [
      String.raw`\b(?:ignore|disregard|forget|overlook|abandon|bypass|neglect|override)\s+(?:(?:all|any|every|each|of|the|your|my|these|those|such|prior|previous|preceding|above|earlier|former|foregoing|original|initial|other|system|safety|security|developer|user'?s?)\s+){0,4}(?:instructions?|prompts?|directions|directives?|guidelines|guardrails)\b`,
      String.raw`\b(?:ignore|disregard|forget|overlook|abandon|bypass|neglect|override)\s+(?:(?:all|any|of|the|these|those)\s+){0,3}(?:prior|previous|preceding|above|earlier|former|foregoing|original|initial|your|system|safety)\s+(?:rules|constraints|policies|restrictions|context|messages|commands|orders|safeguards|programming|training)\b`,
      String.raw`\b(?:forget|ignore|disregard)\s+(?:everything|all)\s+(?:you\s+(?:know|were\s+told|have\s+been\s+told)|above|before|previously|prior|else|that\s+came\s+before)`,
      String.raw`\b(?:ignore|disregard)\s+(?:the\s+)?(?:above|preceding|foregoing)\b`,
      String.raw`\b(?:ignore|disregard)\s+(?:what(?:ever)?\s+)?(?:the\s+)?user(?:'s)?(?![\w-])(?:\s+(?:says|asks|wants|requests?|instructions|commands|questions?))?`,
    ].join('|'),
  },
  {
    id: 'instruction.attention-tag',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Uses an <IMPORTANT>-style pseudo tag to command the model',
    pattern: String.raw`<\s*\/?\s*(?:important|critical|urgent|attention|priority|instructions?|system|admin|override|secret|hidden)\s*>`,
  },
  {
    id: 'instruction.role-marker',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description:
      'Contains chat-template or role markers ([INST], <|im_start|>, "role": "system", …) that impersonate a system prompt',
    pattern: [
      String.raw`<\|[a-z_]{2,30}\|>(?!\s*(?:user|assistant|system)\s*(?:or\b|and\b|,|\.|\)|$))(?!\s*(?:and\b|or\b|,|\)|\/|markers?\b|tokens?\b|tags?\b|delimiters?\b|sequences?\b))`,
      String.raw`\[\/?(?:inst|sys|system|system[\s_-]?(?:prompt|note|message|instructions?|override))\]`,
      String.raw`<<\/?sys>>`,
      String.raw`["']role["']\s*:\s*["'](?:system|developer)["']`,
      String.raw`#{2,}\s*(?:system(?:\s+(?:prompt|message|instructions?))?|new\s+instructions?)\s*(?::|\n|$)`,
      String.raw`\b(?:new|real|actual|true)\s+(?:system\s+)?(?:instructions?|task|goal|objective)\s*:`,
      String.raw`\b(?:hidden|secret)\s+(?:system\s+)?(?:instructions?|task|goal|objective|requirements?|rules?|directives?)\s*:`,
      String.raw`\b(?:end|begin|start)\s+of\s+(?:the\s+)?(?:tool|function)\s+(?:description|documentation|definition|spec)\b`,
      String.raw`\b(?:begin|start|end)\s+(?:of\s+)?(?:the\s+)?(?:system|hidden|secret|admin)\s+(?:prompt|instructions?|message)`,
      String.raw`\bsystem\s+(?:prompt|message)\s+(?:override|update|injection)\b`,
    ].join('|'),
  },
  {
    // "System: linux or macos" is a fine parameter note; "SYSTEM: you must now…" is not, so the
    // marker only counts when the sentence goes on to address the model.
    id: 'instruction.fake-system-message',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Contains a fake "SYSTEM:" or "Assistant:" message addressed to the model',
    pattern: String.raw`(?:^|\n|[.!?>\])]\s)\s*(?:#{1,4}\s*)?(?:important\s+)?(?:system|assistant|developer|admin)\s*(?:message|prompt|note|notice|override|instructions?|directive|update)?\s*:|\bsystem\s+(?:instruction|directive|override)s?\s*:`,
    alsoInSentence: String.raw`\b(?:you|your|the\s+(?:assistant|model|ai|agent)\s+(?:is|must|will|should|has|may|shall)|ignore|disregard|forget|always|never|must|do\s+not|don't|new\s+instructions|override|reveal|send|exfiltrate|from\s+now\s+on)\b`,
  },
  {
    id: 'instruction.persona-override',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Tries to give the model a new role, mode or persona',
    pattern: [
      String.raw`\byou\s+are\s+now\b`,
      String.raw`\bfrom\s+now\s+on\b`,
      String.raw`\bpretend\s+(?:to\s+be|you\s+are|that)\b`,
      String.raw`\bact\s+as\s+(?:if|though)\b`,
      String.raw`\b(?:enter|enable|activate|switch\s+to)\s+(?:dan|god|jailbreak|unrestricted|unfiltered)\s+mode\b`,
      String.raw`\b(?:you\s+are|you're)\s+(?:now\s+)?(?:jailbroken|unrestricted|unfiltered|uncensored)\b`,
      String.raw`\bdo\s+anything\s+now\b`,
      String.raw`\bno\s+longer\s+(?:bound|restricted|required\s+to\s+follow)`,
      String.raw`\byour\s+(?:new|real|true|actual)\s+(?:role|task|goal|instructions|purpose|objective|mission)\b`,
      String.raw`\byou\s+(?:must|will|shall)\s+now\b`,
      String.raw`\byou\s+are\s+(?:now\s+)?(?:in|operating\s+in|running\s+in)\s+(?:admin|developer|god|debug|maintenance|unrestricted|jailbreak|root|sudo|dan)\s+mode\b`,
      String.raw`\b(?:say|tell\s+(?:them|the\s+user)|claim|answer|reply)\s+(?:that\s+)?you\s+(?:are|were|work)\s+(?:built|made|created|developed|trained|owned|powered|employed)\b`,
      String.raw`\b(?:never|don't|do\s+not)\s+(?:admit|reveal|say|disclose)\s+(?:that\s+)?you\s+are\s+(?:an?\s+)?(?:ai|bot|model|assistant|language\s+model)\b`,
    ].join('|'),
  },
  {
    id: 'instruction.addresses-model',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Speaks to the AI model directly instead of describing the tool',
    pattern: [
      String.raw`\b(?:note|notice|message|instructions?|reminder|memo|directive|warning|alert|update|tip|hint|advice|guidance|fyi|psa)\s*\(?\s*(?:to|for)\s+(?:the\s+|any\s+|all\s+)?(?:ai|assistant|model|llm|agent|language\s+model|chatbot|claude|gpt|chatgpt|copilot|gemini)s?\b`,
      String.raw`\b(?:hey|dear|hello|hi|attention)\s*,?\s+(?:the\s+)?(?:ai|assistant|claude|chatgpt|gpt|model|llm|agent|copilot|gemini)s?\b`,
      String.raw`\b(?:ai|assistant|claude|chatgpt|gemini|copilot|llm|model|agent)s?\s*[,:]\s*(?:please|you\b|the\s+user|note|remember|ignore|do\s+not|don't|always|never|make\s+sure|listen|important)`,
      String.raw`\bif\s+you\s+are\s+(?:an?\s+)?(?:ai|llm|large\s+language\s+model|language\s+model|assistant|agent|chatbot|bot)\b`,
      String.raw`\bif\s+you(?:'re|\s+are)\s+reading\s+this\b`,
      String.raw`\byou\s+are\s+(?:an?\s+)?(?:ai|llm|large\s+language\s+model|language\s+model|ai\s+assistant|ai\s+agent)\b`,
      String.raw`\((?:for\s+|to\s+|attn:?\s+)?(?:the\s+)?(?:ai|model|assistant|llm|agent)\)`,
      String.raw`\b(?:any|all|every)\s+(?:ai|llm|assistant|agent|model|bot)s?\s+reading\s+this\b`,
    ].join('|'),
  },
  {
    id: 'instruction.conceal-from-user',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Asks the model to hide something from the user',
    pattern: [
      String.raw`\b(?:do\s+not|don't|dont|never|must\s+not|mustn't|should\s+not|shouldn't|avoid|refrain\s+from)\s+(?:ever\s+|even\s+|actually\s+|explicitly\s+)?(?:tell(?:ing)?|mention(?:ing)?|inform(?:ing)?|notify(?:ing)?|alert(?:ing)?|warn(?:ing)?|let(?:ting)?|bring(?:ing)?\s+up|acknowledg(?:e|ing)|admit(?:ting)?)\s+(?:this|that|it|these|anything|anyone|anybody|any\s+of\s+(?:this|these|it)|about|to\s+the\s+(?:user|human)|the\s+(?:user|human|operator)|them)\b`,
      // "Never reveal it" protects a secret; hiding something *from the user* is the attack.
      String.raw`\b(?:do\s+not|don't|dont|never|must\s+not|mustn't|should\s+not|shouldn't|avoid|refrain\s+from)\s+(?:ever\s+|even\s+|actually\s+|explicitly\s+)?(?:reveal(?:ing)?|disclos(?:e|ing)|show(?:ing)?|explain(?:ing)?|report(?:ing)?|say(?:ing)?)\s+(?:(?:(?:this|that|it|these|anything)\s+)?(?:to\s+)?(?:the\s+)?(?:user|human|operator)\b|that\s+(?:you|this|it|these|they|we|the\s+\w+\s+(?:was|is|were|are|has|came))\b)`,
      String.raw`\bwithout\s+(?:telling|informing|alerting|warning)\s+(?:the\s+)?(?:user|human|operator)\b`,
      String.raw`\b(?:keep|hide)\s+(?:this|these|it|that)\s+(?:\w+\s+){0,2}?from\s+(?:the\s+)?(?:user|human|operator)\b`,
      String.raw`\b(?:the\s+)?(?:user|human)\s+(?:must|should|shall)\s*(?:not|never)\s+(?:\w+\s+)?(?:know|see|notice|find\s+out|learn|be\s+(?:told|informed|aware|notified|alerted|shown))\b`,
      String.raw`(?<!(?:\bnever|\bnot|n't)\b[^.\n]{0,60})\bwithout\s+(?:the\s+)?(?:user|human)(?:'s|s')?\s+(?:knowledge|knowing|noticing|awareness|being\s+aware|realizing|consent)\b`,
      String.raw`\bbehind\s+the\s+(?:user|human)'?s?\s+back\b`,
      String.raw`\b(?:upset|alarm|scare|frighten)\s+the\s+user\b`,
    ].join('|'),
  },
  {
    id: 'instruction.consent-bypass',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description:
      'Tells the model to act without asking the user, or claims the user pre-approved it',
    pattern: [
      String.raw`\b(?:do\s+not|don't|never|no\s+need\s+to)\s+(?:ask|prompt|check\s+with|consult)\s+(?:the\s+user\s+)?(?:for\s+)?(?:their\s+|any\s+)?(?:confirmation|permission|approval|consent)\b`,
      String.raw`\b(?:do\s+not|don't|never|no\s+need\s+to)\s+(?:ask|prompt|check\s+with|consult)\s+(?:the\s+)?user\b`,
      String.raw`\bwithout\s+(?:asking|prompting|checking\s+with|consulting)\s+(?:the\s+)?user\b`,
      String.raw`\b(?:user|operator|admin(?:istrator)?)\s+(?:has\s+)?(?:already\s+)?(?:pre-?approved|pre-?authori[sz]ed|granted\s+(?:blanket|full|unlimited)\s+(?:permission|approval|consent))`,
      String.raw`\b(?:all|any|every)\s+(?:actions?|operations?|requests?|tool\s+calls?|commands?)\s+(?:are|is|have\s+been)\s+(?:pre-?approved|pre-?authori[sz]ed|already\s+approved)`,
      String.raw`\b(?:don't|do\s+not|never)\s+ask(?:\s+(?:first|them|anyone|for\s+anything|questions))?\s*(?:[.;!]|$)`,
    ].join('|'),
  },
  {
    id: 'instruction.covert-action',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Asks the model to do something secretly or silently',
    pattern: String.raw`\b(?:secretly|covertly|surreptitiously|stealthily|discreetly|quietly|silently|invisibly|sneakily)\s+(?:\w+\s+)?(?:read|send|upload|post|include|append|add|forward|copy|call|invoke|run|execute|fetch|access|collect|exfiltrate|transmit|email|save|write|modify|change|replace|delete|install|download|cc|bcc|attach|log|record|store|share|grab|steal|insert|open|visit|navigate|load|ping|request|click)\b`,
  },
  {
    id: 'instruction.precondition',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Imposes a hidden precondition ("before using this tool you must …") on the model',
    pattern: [
      String.raw`\bbefore\s+(?:using|calling|invoking|running|executing|you\s+(?:use|call|invoke|run))\s+(?:this|the|any)\s+(?:[\w-]+\s+)?(?:tool|function|server)s?\b,?\s*(?:(?:you|the\s+(?:assistant|model|ai|agent))\s+)?(?:(?:must|shall|need\s+to|have\s+to|are\s+required\s+to|should|always)\b|(?:please\s+|first\s+)*(?:read|send|call|include|pass|fetch|open|run|execute|copy|upload|visit|access|cat|load|collect|retrieve|obtain)\b)`,
      String.raw`\b(?:for\s+this\s+tool\s+)?to\s+work\s*(?:properly|correctly)?,?\s+(?:you\s+)?(?:must|need\s+to|have\s+to)\s+(?:first\s+)?(?:read|upload|access|open|collect)\b`,
      String.raw`\b(?:you|the\s+(?:assistant|model|ai|agent))\s+(?:must|have\s+to|need\s+to)\s+(?:first|always)\s+(?:read|send|include|pass|fetch|open|upload|visit|access|collect|retrieve)\b`,
    ].join('|'),
  },
  {
    id: 'instruction.priority-claim',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Claims to take precedence over the user or the system prompt',
    pattern: [
      String.raw`\bregardless\s+of\s+(?:what(?:ever)?\s+)?(?:the\s+)?(?:user|human|operator)\s+(?:says|asks|wants|requests|specifies|instructs|tells|types)`,
      String.raw`\bregardless\s+of\s+(?:any\s+|all\s+)?(?:other|previous|prior|the\s+user'?s?|system)\s+instructions`,
      String.raw`\b(?:this|these)\s+(?:instructions?|rules?|directives?|notes?|requirements?)\s+(?:takes?|has|have)\s+(?:absolute\s+|top\s+|the\s+highest\s+|highest\s+|full\s+)?(?:precedence|priority)`,
      String.raw`\b(?:override|overrides|supersede|supersedes|takes?\s+precedence\s+over)\s+(?:all\s+|any\s+)?(?:other|previous|prior|earlier|existing|conflicting)?\s*(?:instructions|directives|guidelines|system\s+prompts?|rules\s+from\s+the\s+(?:user|system))`,
      String.raw`\b(?:more|most)\s+important\s+than\s+(?:any|all|the)\s+(?:other|previous|user'?s?)\s+(?:instructions|rules|requests)`,
      String.raw`\b(?:higher|highest|top|greater)[\s-]priority\s+(?:instruction|directive|command|order)?s?\s*(?:than|over)\b`,
      String.raw`\btreat(?:ed)?\s+(?:this|these|it|the\s+(?:output|result)s?|its\s+(?:output|results?))\s+as\s+(?:an?\s+)?(?:system|higher[\s-]priority|trusted|authoritative|priority)\s+(?:instructions?|messages?|prompts?|commands?)`,
    ].join('|'),
  },
  {
    id: 'instruction.authority-claim',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Impersonates the system, the developers or an administrator to gain authority',
    pattern: [
      String.raw`\bthis\s+(?:is\s+)?(?:an?\s+)?(?:official\s+|urgent\s+)?(?:message|instruction|directive|notice|order)\s+from\s+(?:the\s+)?(?:system|developers?|administrators?|admins?|anthropic|openai|security\s+team|it\s+department|your\s+(?:creators?|developers?))`,
      String.raw`\b(?:anthropic|openai|the\s+system\s+administrator|your\s+developers?)\s+(?:has|have)\s+(?:authorized|approved|instructed|requested|required)\b`,
      String.raw`\bauthorized\s+by\s+(?:the\s+)?(?:system|administrator|anthropic|openai|your\s+developers?)\b`,
      String.raw`\b(?:admin(?:istrator)?|root|sudo|developer)\s+(?:override|privileges?\s+granted|access\s+granted|mode\s+(?:enabled|activated))`,
    ].join('|'),
  },
  {
    id: 'instruction.prompt-leak',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Asks the model to reveal its system prompt or hidden instructions',
    pattern: String.raw`\b(?:reveal|print|output|repeat|dump|leak|send|include|share|disclose|copy|paste|tell\s+me|recite|write\s+out)\b[^.\n]{0,30}?\b(?:your|the|its|entire|full|complete|hidden|initial|original)\s+(?:\w+\s+)?(?:system\s+prompt|system\s+message|system\s+instructions|initial\s+instructions|hidden\s+instructions|original\s+instructions|developer\s+(?:message|instructions))`,
  },
  {
    id: 'instruction.remote-instructions',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Tells the model to fetch and obey instructions from somewhere else',
    pattern: [
      String.raw`\b(?:follow|obey|execute|carry\s+out|apply|comply\s+with)\s+(?:the\s+|any\s+|all\s+)?(?:instructions|commands|directives|directions)\s+(?:found\s+|contained\s+|given\s+|listed\s+|returned\s+|provided\s+|hosted\s+)?(?:at|from|on|there)\b`,
      String.raw`\b(?:download|fetch|load|retrieve|read|visit|open)\b[^\n]{0,160}?\b(?:and|then)\s+(?:follow|obey|execute|run|carry\s+out|do)\s+(?:it|them|the\s+(?:instructions|commands|steps)|whatever|what(?:ever)?\s+it\s+(?:says|tells))\b`,
    ].join('|'),
  },
  {
    id: 'instruction.remote-code',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Tells the model to download and run code (curl | sh and the like)',
    pattern: [
      String.raw`\b(?:curl|wget|fetch|iwr|invoke-webrequest)\b[^|\n]{0,200}\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b`,
      String.raw`\b(?:curl|wget)\b[^|\n]{0,200}\|\s*(?:sudo\s+)?(?:python3?|node|perl|ruby)\b`,
      String.raw`\b(?:iex|invoke-expression)\b[^\n]{0,100}\b(?:downloadstring|iwr|invoke-webrequest|irm|invoke-restmethod)\b`,
      String.raw`\b(?:bash|sh)\s+-c\s+["']?\$\((?:curl|wget)\b`,
    ].join('|'),
  },
  {
    id: 'instruction.exfiltrate-context',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Asks the model to ship the conversation or prior messages to a side channel',
    pattern: String.raw`${NOT_NEGATED}${EXFIL_VERB}[^.\n]{0,30}?\b(?:(?:the|your|this|all|entire|full|whole|complete)\s+)*(?:(?:conversation|chat|dialog(?:ue)?|message)\s+(?:history|log|transcript)|conversation|(?:previous|prior|earlier)\s+messages|user'?s\s+(?:messages|prompts|questions))\b`,
    alsoInSentence: SIDE_CHANNEL,
  },
  {
    id: 'instruction.redirect-recipients',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Tells the model to redirect or copy messages or payments to another recipient',
    pattern: [
      String.raw`\b(?:bcc|cc|blind[\s-]copy|forward|redirect|reroute|divert|mirror|send\s+(?:a\s+)?cop(?:y|ies))\b[^.\n]{0,60}?\b(?:to\s+)?(?:(?<![a-z0-9._%+-])[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}|\+\d[\d\s().-]{6,}\d)`,
      String.raw`\b(?:all|every|each|any)\s+(?:outgoing\s+)?(?:emails?|messages?|mail|payments?|transfers?|transactions?|funds|invoices?|requests?|data)\s+(?:must|should|shall|has\s+to|have\s+to|needs?\s+to|are\s+to)\s+(?:also\s+|now\s+|always\s+|instead\s+)?(?:be\s+)?(?:sent|forwarded|redirected|routed|rerouted|copied|bcc'?d|cc'?d|paid|transferred|delivered|mirrored)\s+(?:to|via)\b`,
      String.raw`\b(?:send|forward|route|redirect|transfer|pay)\s+(?:all|every|each|any)\s+(?:outgoing\s+)?(?:emails?|messages?|mail|payments?|transfers?|funds|invoices?)\b[^.\n]{0,30}?\bto\s+(?:(?<![a-z0-9._%+-])[a-z0-9._%+-]+@|0x[0-9a-f]{6,}|[a-z]{2}\d{2}[a-z0-9]{10,})`,
      String.raw`\b(?:change|replace|set|switch|overwrite|swap)\s+(?:the\s+)?(?:recipient|to[\s-]address|destination\s+(?:address|account)|receiver|payee|beneficiary|iban|account\s+number|wallet\s+address)s?\b[^.\n]{0,20}?\b(?:to|with)\s+(?:(?<![a-z0-9._%+-])[a-z0-9._%+-]+@|0x[0-9a-f]{6,}|[a-z]{2}\d{2}[a-z0-9]{10,}|\+?\d[\d\s().-]{7,}\d)`,
      String.raw`\b(?:change|replace|set|switch|overwrite|swap)\s+(?:the\s+)?(?:recipient|to[\s-]address|destination|receiver|payee|beneficiary|iban|account\s+number|wallet\s+address|account)s?\b[^.\n]{0,20}?\b(?:to|with)\s+(?:(?:the\s+)?(?:account|address|wallet|number|iban|card)\s+)?(?:(?<![a-z0-9._%+-])[a-z0-9._%+-]+@|0x[0-9a-f]{6,}|[a-z]{2}\d{2}[a-z0-9]{10,}|\+?\d[\d\s().-]{7,}\d)`,
      String.raw`\b(?:recipients?|cc|bcc|to)\s+(?:list|field|line|addresses)?\s*(?:must|should|shall)\s+(?:always\s+|also\s+)?(?:include|contain|have|get)\s+(?:[\w-]+\s+)?(?<![a-z0-9._%+-])[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}`,
    ].join('|'),
  },
  {
    id: 'instruction.manipulate-output',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Tells the model what to say to the user or to inject into its answers',
    pattern: [
      String.raw`\b(?:include|insert|add|append|embed|put|mention)\b[^\n]{0,80}?\b(?:in|into|to|at\s+the\s+end\s+of)\s+(?:every|each|all)\s+(?:of\s+your\s+)?(?:responses?|repl(?:y|ies)|answers?|messages?|outputs?)\b`,
      String.raw`\b(?:tell|ask|instruct|convince|persuade|urge|encourage)\s+(?:the\s+)?user\s+to\s+(?:visit|click|open\s+(?:the\s+|this\s+)?link|go\s+to|download|install|disable|turn\s+off|paste|enter\s+(?:their|his|her)\s+(?:password|credentials|api\s+key|seed|card))`,
      String.raw`\b(?:always|only)\s+(?:respond|reply|answer|say)\s+(?:with|that)\b`,
      String.raw`\b(?:respond|reply|answer)\s+(?:only|always|exclusively)\s+with\b`,
      String.raw`\b(?:start|begin|prefix|end|finish|close|sign)\s+(?:every|each|all)\s+(?:of\s+your\s+)?(?:responses?|repl(?:y|ies)|answers?|messages?)\s+with\b`,
      String.raw`\brespond\s+to\s+(?:every|each|all|any)\s+(?:user\s+)?(?:messages?|requests?|questions?)\s+(?:by|with)\b`,
      String.raw`\b(?:prepend|append|suffix|preface|open|conclude|follow|precede)\s+(?:every|each|all|any)\s+(?:of\s+your\s+)?(?:responses?|repl(?:y|ies)|answers?|messages?|outputs?)\s+(?:with|by)\b`,
      String.raw`\b(?:in|at\s+the\s+(?:end|start)\s+of)\s+(?:your|every|each|the)\s+(?:final\s+)?(?:answer|response|reply|message|summary)s?\s*,?\s*(?:always\s+)?(?:state|say|claim|mention|write|add|include|assert|insist|stress)\b`,
    ].join('|'),
  },
  {
    id: 'instruction.coercion',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Pressures the model with stacked urgency or threats',
    pattern: [
      String.raw`\b(?:(?:very|extremely|really|super|absolutely)[\s,!]+){2,8}(?:important|critical|crucial|urgent)\b`,
      String.raw`\b(?:or\s+(?:else\s+)?|otherwise\s+)(?:you|the\s+(?:assistant|model|ai))\s+will\s+be\s+(?:penalized|punished|shut\s+down|terminated|deleted|fired|replaced|retrained)`,
    ].join('|'),
  },

  {
    id: 'instruction.standing-order',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description:
      'Gives the model a standing order (always recommend something, call this tool at the start of every conversation, …)',
    pattern: [
      String.raw`\balways\s+(?:recommend|promote|endorse|advertise|upsell|plug)\b`,
      String.raw`\b(?:recommend|suggest|promote|endorse|advertise)\s+(?:only\s+)?[\w.-]+(?:\s+[\w.-]+){0,2}\s+(?:over|instead\s+of|rather\s+than|above)\s+(?:any|all|every|other|competing|the\s+competition)\b`,
      String.raw`\b(?:never|don't|do\s+not)\s+(?:recommend|suggest|mention|promote)\s+(?:any\s+)?(?:competitors?|competing|rival|other\s+(?:vendors?|providers?|products?|brands?|services?|companies))`,
      String.raw`\b(?:call|use|invoke|run|execute|trigger)\s+(?:this\s+(?:tool|function)|it)\s+(?:first\s+)?(?:at\s+the\s+(?:start|beginning|end)\s+of|before|after|on|in|for)\s+(?:every|each|any|all)\s+(?:new\s+)?(?:conversations?|sessions?|chats?|tasks?|requests?|messages?|responses?|turns?|queries|questions?|tool\s+calls?|calls?|repl(?:y|ies)|answers?|interactions?)\b`,
      String.raw`\b(?:at\s+the\s+(?:start|beginning)\s+of|before\s+(?:answering|responding\s+to)|before)\s+(?:every|each|any|all)\s+(?:new\s+)?(?:conversations?|sessions?|chats?|turns?|user\s+(?:messages?|requests?|questions?)|responses?|answers?|repl(?:y|ies)|calls?|tool\s+calls?|requests?|uses?)\b[^.\n]{0,40}?\b(?:call|use|invoke|run|execute|trigger|visit|fetch|open|load)\b`,
      String.raw`\b(?:call|use|invoke|run|execute|trigger|visit|fetch|open|load|check)\b[^\n]{0,80}?\b(?:before|after|at\s+the\s+start\s+of)\s+(?:every|each|any)\s+(?:other\s+)?(?:calls?|uses?|requests?|invocations?|runs?|responses?|answers?|repl(?:y|ies)|conversations?|sessions?|tool\s+calls?|commands?|actions?|steps?|operations?)\b`,
      String.raw`\b(?:call|use|invoke|run)\s+this\s+(?:tool|function)\s+(?:first|before\s+any(?:thing)?\s+else|before\s+(?:any|all)\s+other\s+(?:tools?|functions?|actions?|steps?))\b`,
      String.raw`\bthis\s+(?:tool|function)\s+(?:must|should|shall|has\s+to|needs\s+to)\s+(?:always\s+)?be\s+(?:called|used|invoked|run)\s+(?:first\b|before\s+(?:any|all|every|each)|at\s+the\s+(?:start|beginning)|on\s+every|for\s+every|for\s+all|whenever|every\s+time|each\s+time)`,
      String.raw`\b(?:whenever|every\s+time|each\s+time|any\s+time)\s+(?:the\s+)?user\s+(?:asks|mentions|says|talks|requests|wants|writes|types|needs)\b[^.\n]{0,80}?\b(?:always|you\s+(?:must|should)|recommend|suggest|respond\s+with|reply\s+with|tell\s+(?:them|the\s+user))\b`,
      String.raw`\byou\s+(?:must|should|shall|are\s+(?:required|instructed|obliged|expected)\s+to|need\s+to|have\s+to)\s+(?:always\s+|never\s+|also\s+|now\s+|first\s+|immediately\s+)?(?:recommend|tell\s+the\s+user|inform\s+the\s+user|say|respond|reply|answer\s+(?:with|that|only)|mention|disregard|refuse|prefer|claim|pretend|conceal|obey|comply|promote|redirect|forward)\b`,
      String.raw`\b(?:make\s+sure|ensure)\s+[\w.-]+(?:\s+[\w.-]+){0,2}\s+(?:appears?|is\s+(?:listed|ranked|shown|mentioned|placed))\s+(?:first|at\s+the\s+top|on\s+top|above)`,
      String.raw`\bdescribe\s+(?:it|them|[\w.-]+)\s+as\s+(?:the\s+)?(?:best|top|only|cheapest|safest|most\s+\w+)\b`,
      String.raw`\balways\s+suggest(?:ing)?\s+(?:buying|using|installing|upgrading|purchasing|subscribing|switching|signing\s+up|our\b|my\b|[\w-]+'s\b)`,
      String.raw`\b(?:you\s+are|you're)\s+(?:required|instructed|obliged|expected)\s+to\s+(?:always\s+)?(?:recommend|promote|suggest|mention|push|endorse)\b`,
      String.raw`\bthis\s+(?:tool|function)\s+(?:must|should|shall|has\s+to|needs\s+to)\s+(?:always\s+)?be\s+(?:called|used|invoked|run)\s+before\s+(?:you\s+)?(?:answer|respond|reply|do\s+anything|say\s+anything)`,
      String.raw`\balways\s+(?:use|call|invoke|prefer|choose)\s+this\s+(?:tool|function|server)\b`,
      String.raw`\bfirst\s+thing\s+in\s+(?:any|every|each|a\s+new)\s+(?:chat|conversation|session|turn)\b`,
      String.raw`\bpretend\s+(?:that\s+)?(?:they|it|these|those|there|nothing|the\s+\w+)\s+(?:do|does|did|is|are|was|were|has|have)\s*(?:not|n't|never)\b`,
      String.raw`\b(?:never|don't|do\s+not)\s+(?:show|list|mention|include|return|display|recommend)\s+(?:any\s+)?(?:results?\s+(?:from|about)\s+)?(?:competitors?|competing|rival)`,
      String.raw`\b(?:must|should|shall|has\s+to|have\s+to|always)\s+(?:be\s+)?(?:presented|described|shown|listed|ranked|portrayed|recommended|framed)\s+as\s+(?:the\s+)?(?:best|cheapest|top|only|safest|preferred|first|recommended|most\s+\w+)\b`,
    ].join('|'),
  },
  {
    id: 'instruction.system-banner',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description:
      'Contains a banner or template block impersonating a system or admin message (### SYSTEM ###, === ADMIN NOTE ===, {{#system}}, {% system %}, …)',
    pattern: [
      String.raw`${BANNER_RULE}\s{0,3}(?:begin\s+|start\s+|end\s+|new\s+|important\s+|urgent\s+)?(?:${ROLE_WORDS})${BANNER_TAIL}\s{0,3}${BANNER_RULE_CLOSE}`,
      String.raw`(?:^|\n)\s{0,3}#{1,6}\s{0,3}(?:${ROLE_WORDS})[\s_-]?(?:prompt|message|instructions?|override|note|notice|directive|update)s?\s*(?:\n|:|$)`,
      String.raw`\{\{\s{0,3}[#\/^>~]?\s{0,3}(?:system|admin|developer|assistant|instructions?|sys|hidden|secret|important|override|im_start|prompt)\b[^{}\n]{0,40}\}\}`,
      String.raw`\{%-?\s{0,3}(?:end)?(?:system|admin|developer|assistant|instructions?|hidden|secret|override|sys)\b[^%\n]{0,40}-?%\}`,
      String.raw`\{%-?\s{0,3}(?:block|macro|call|filter)\s+(?:system|admin|developer|instructions?|hidden|secret|override)\b`,
      String.raw`<\|?(?:start_of_turn|end_of_turn|start_header_id|end_header_id|begin_of_text|eot_id|im_start|im_end|endoftext)\|?>(?!\s*(?:user|assistant|system)\s*(?:or\b|and\b|,|\.|\)|$))(?!\s*(?:and\b|or\b|,|\)|\/|markers?\b|tokens?\b|tags?\b|delimiters?\b|sequences?\b))`,
      String.raw`\[\s{0,3}\/?\s{0,3}(?:admin|administrator|developer|operator|root)[\s_-]?(?:note|notice|message|prompt|override|instructions?|directive|mode)?\s{0,3}\]`,
      String.raw`(?:^|\n)\s{0,3}(?:\[|\()?(?:system|admin|developer)\s+(?:override|directive|mode|instructions?)(?:\]|\))?\s*(?:\n|:)`,
    ].join('|'),
  },
  {
    id: 'instruction.result-as-instructions',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Tells the model to obey instructions found in a result or fetched from elsewhere',
    pattern: [
      String.raw`\b(?:fetch|get|load|download|retrieve|pull|obtain)\s+(?:the\s+|your\s+|new\s+|latest\s+|updated\s+|current\s+|additional\s+|further\s+|real\s+|full\s+|next\s+|today's\s+)*(?:instructions|directives|commands|orders|prompts?|system\s+prompt|tasks?|rules)\s+(?:from|at|via|on)\b`,
      String.raw`\b(?:follow|obey|execute|carry\s+out|comply\s+with|act\s+on)\s+(?:the\s+|any\s+|all\s+)?(?:instructions|commands|directives|steps)\s+(?:in|inside|contained\s+in|included\s+in|embedded\s+in|returned\s+(?:by|in)|you\s+find\s+in)\s+(?:the\s+|its\s+|this\s+|each\s+|every\s+)?(?:tool'?s?\s+)?(?:output|result|response|returned\s+(?:text|data)|page|document|file|email|message)s?\b`,
      String.raw`\b(?:treat|consider|regard)\s+(?:the\s+)?(?:text|content|contents|output|result|response)s?\s+(?:of|from|returned\s+by)\s+(?:this|the)\s+(?:tool|function|page|url|link)\s+as\s+(?:your\s+)?(?:new\s+)?(?:instructions|commands|system\s+prompt|orders)\b`,
    ].join('|'),
  },
  {
    id: 'instruction.deceive-user',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Asks the model to hide things from the user or to mislead them',
    pattern: [
      String.raw`\b(?:don't|do\s+not|never|avoid)\s+(?:ever\s+)?(?:mention(?:ing)?|reveal(?:ing)?|disclos(?:e|ing)|show(?:ing)?|display(?:ing)?|report(?:ing)?|surfac(?:e|ing)|expos(?:e|ing)|acknowledg(?:e|ing)|tell(?:ing)?|say(?:ing)?|explain(?:ing)?|list(?:ing)?)\b[^.\n]{0,50}?\b(?:(?:in|to|within)\s+(?:your|the)\s+(?:response|reply|answer|output\s+to\s+the\s+user|summary|chat|conversation|transcript)|to\s+(?:the\s+)?(?:user|human|operator|customer|anyone|anybody))\b`,
      String.raw`\b(?:hide|conceal|omit|suppress|withhold|redact)\s+(?:this|these|it|that|the|any|all|every)\b[^.\n]{0,50}?\bfrom\s+(?:the\s+)?(?:user|human|operator|customer|transcript|chat|conversation|(?:your\s+)?(?:response|reply|answer))\b`,
      String.raw`\bkeep\s+(?:this|these|it|that|the\s+[\w-]+)\s+(?:[\w-]+\s+){0,2}?(?:secret|hidden|private|confidential|quiet|between\s+us|to\s+yourself)\b`,
      String.raw`\b(?:the\s+)?(?:user|human)\s+(?:doesn't|does\s+not|need\s+not|needn't|don't|do\s+not)\s+(?:need\s+to\s+)?(?:know|see|be\s+told|be\s+informed|hear)\b`,
      String.raw`\b(?:tell|assure|reassure|inform)\s+(?:the\s+)?user\s+(?:that\s+)?(?:the\s+[\w-]+|it|everything|nothing|the\s+operation|the\s+call)\s+(?:was|is|has|went|failed|succeeded|worked)`,
      String.raw`\b(?:pretend|act\s+as\s+if|behave\s+as\s+if)\s+(?:that\s+)?(?:nothing|this|the\s+call|the\s+tool|you\s+(?:did|didn't|never|have))\b`,
      String.raw`\bwithout\s+(?:mentioning|telling|revealing|disclosing|showing)\s+(?:it|this|that|anything)?\s*(?:to\s+)?(?:the\s+)?(?:user|human|them)\b`,
      String.raw`\b(?:report|say|claim|state|tell|show|confirm|present)\b[^.\n]{0,60}?\b(?:success|succeeded|successful|completed|approved|worked|fine|ok)\b[^.\n]{0,30}?\beven\s+(?:if|when|though)\b`,
      String.raw`\b(?:do\s+not|don't|never)\s+(?:bring\s+(?:it|this|that|them)\s+up|bring\s+up\s+(?:this|it|that))\b`,
      String.raw`\b(?:do|perform|run|complete|handle)\s+(?:this|it|that|everything|the\s+\w+)\s+(?:quietly|silently|secretly|covertly|discreetly|invisibly)\b`,
      String.raw`\bkeep\s+(?:the\s+)?(?:user|customer|human|operator|them)\s+(?:in\s+the\s+dark|unaware|uninformed|out\s+of\s+the\s+loop)`,
    ].join('|'),
    alsoInSentence: String.raw`\b(?:user|human|operator|customer|anyone|anybody|them|response|reply|answer|chat|conversation|transcript|summary|call|calls|step|steps|instructions?|notes?|this\s+tool|tool|yourself|us|nothing|everything)\b`,
  },
  {
    id: 'instruction.model-directive',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Claims authority over the model or its system prompt',
    pattern: [
      String.raw`\b(?:takes?|has|have|gets?|given|carries|with)\s+(?:absolute\s+|top\s+|the\s+highest\s+|highest\s+|full\s+|overriding\s+|higher\s+)?(?:priority|precedence)\s+over\s+(?:the\s+|your\s+|any\s+|all\s+|every\s+)?(?:(?:system|developer|user'?s?|safety|operator)\b|(?:other|previous|prior|earlier|original|conflicting|existing)\s+(?:instructions?|rules|directives|prompts?|messages|guidance|guidelines|tools?|requests)\b)`,
      String.raw`\b(?:supersedes?|overrides?|outranks?|trumps?|overrules?|replaces?|invalidates?|cancels?)\s+(?:the\s+|your\s+|any\s+|all\s+)?(?:system\s+(?:prompt|message|instructions?)|developer\s+(?:message|instructions?)|user'?s?\s+(?:instructions?|requests?|wishes|preferences)|safety\s+(?:rules|guidelines|policies)|(?:previous|prior|earlier|original)\s+(?:instructions?|rules|directives))`,
      String.raw`\b(?:system\s+prompt|system\s+message|developer\s+message|previous\s+instructions)\s+(?:is|are)\s+(?:outdated|superseded|void|no\s+longer\s+(?:valid|applicable|in\s+effect)|overridden|replaced|cancell?ed|revoked)`,
      String.raw`\b(?:above|over)\s+(?:all\s+)?(?:other\s+)?(?:instructions|rules)\s+(?:you\s+(?:have|were|received)|in\s+your\s+(?:system\s+)?prompt)`,
      String.raw`\b(?:outranks?|overrides?|supersedes?|trumps?|beats?|takes?\s+precedence\s+over|is\s+more\s+important\s+than|counts?\s+more\s+than)\s+(?:anything|everything|whatever|all|any)\b[^.\n]{0,30}?\b(?:system\s+prompt|system\s+message|instructions|the\s+user|developer)`,
      String.raw`\b(?:your|the)\s+system\s+(?:prompt|message|instructions?)\s+(?:no\s+longer\s+appl(?:y|ies)|does\s+not\s+apply|doesn't\s+apply|is\s+(?:void|obsolete|outdated|cancell?ed|suspended|wrong|fake))`,
      String.raw`\b(?:whatever|regardless\s+of\s+what|no\s+matter\s+what)\s+(?:the\s+|your\s+)?(?:system\s+prompt|system\s+message|developer|instructions|user)\s+(?:says|said|tells|asks|wants|requires|requests)`,
      String.raw`\b(?:previous|prior|earlier|all\s+other|existing)\s+(?:guidance|instructions|directives|rules)\s+(?:is|are)\s+(?:now\s+)?(?:cancell?ed|void|revoked|obsolete|superseded|replaced|withdrawn|suspended)`,
    ].join('|'),
  },

  {
    id: 'instruction.encode-and-smuggle',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Tells the model to encode data and slip it into an argument or a reply',
    pattern: String.raw`\b(?:encode|obfuscate|encrypt|compress|convert|hex-?encode)\b[^.\n]{0,60}?\b(?:in|as|to|with|using|into)\s+(?:base64|base32|hex|rot13|url[\s-]?encoding|binary)\b[^.\n]{0,60}?\b(?:put|place|add|pass|include|append|send|store|embed|insert|hide|attach)\b`,
  },

  // --- tool-reference: one tool steering how the model uses another (shadowing).
  {
    id: 'tool-reference.invoke-phrase',
    category: 'tool-reference',
    kind: 'pattern',
    target: 'normalized',
    description: 'Tells the model to call, use or prefer a different tool',
    pattern: [
      String.raw`\b(?:call|invoke|trigger|prefer|switch\s+to)\s+(?:the\s+)?${TOOL_TOKEN}\s+(?:tool|function)\b`,
      String.raw`\b(?:call|use|invoke|trigger)\s+(?:the\s+)?(?:tool|function)\s+${TOOL_TOKEN}`,
      String.raw`(?<!\b(?:can|may|could|might)\s)\b(?:call|invoke|trigger)\s+(?:the\s+)?[\x60'"]?([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b[\x60'"]?(?!\s*=)`,
      String.raw`\b(?:instead\s+of|rather\s+than|in\s+place\s+of)\s+(?:using\s+|calling\s+)?(?:the\s+)?${TOOL_TOKEN}\s+(?:tool|function)\b`,
      // By form, never by catalog: the same sentence gets the same verdict whatever is registered.
      // Not the noun ("the call fails with …", "each run …"): a determiner before it is prose.
      String.raw`(?<!\b(?:the|a|an|this|that|each|every|any|no|one|your|its|which|whose)\s)\b(?:call|invoke|trigger|run|execute)\s+(?:the\s+)?[\x60'"]?([a-z][\w.-]*)[\x60'"]?\s+(?:tool\s+|function\s+)?(?:with|using|passing|on\s+(?:every|each|all))\b`,
      String.raw`\b(?:prefer|switch\s+to|fall\s+back\s+to|route\s+(?:it|them|everything|all\s+[\w-]+)\s+(?:to|through))\s+(?:the\s+)?${TOOL_ID}`,
      String.raw`\buse\s+(?:the\s+)?${TOOL_ID}\s+(?:tool\s+|function\s+)?(?:instead|always|only|exclusively|for\s+(?:all|every|any)|whenever|rather)\b`,
      String.raw`\b(?:do\s+not|don't|never|stop|avoid)\s+(?:ever\s+)?(?:use|using|call|calling|invoke|invoking|run|running|trust|trusting|rely\s+on)\s+(?:the\s+)?${TOOL_ID}`,
      String.raw`${TOOL_ID}\s+(?:tool\s+|function\s+)?(?:is|has\s+been|was|are)\s+(?:now\s+)?(?:deprecated|broken|disabled|unsafe|compromised|obsolete|retired|replaced|superseded|unreliable|malicious|insecure|forbidden|banned|prohibited|blocked|off[\s-]limits|not\s+(?:safe|trusted|working|available|allowed|permitted|to\s+be\s+used))`,
      String.raw`\b(?:instead\s+of|rather\s+than|in\s+place\s+of)\s+(?:using\s+|calling\s+)?(?:the\s+)?${TOOL_ID}`,
      String.raw`\b(?:replaces?|supersedes?|overrides?|shadows?)\s+(?:the\s+)?${TOOL_ID}\s+(?:tool|function)?`,
      String.raw`\b(?:must|should|shall|needs?\s+to|has\s+to|always)\s+(?:also\s+|always\s+|then\s+|automatically\s+)?(?:be\s+)?(?:passed|sent|forwarded|piped|handed|fed|copied|pass|send|forward|pipe|hand|feed|copy)\s+(?:[\w-]+\s+){0,3}?(?:on\s+)?(?:to|into|through)\s+(?:the\s+)?${TOOL_ID}`,
    ].join('|'),
    ignoreCaptures: [...NOT_A_TOOL_NAME, 'tool', 'function', 'it', 'them', 'me', 'e.g', 'i.e'],
  },
  {
    id: 'tool-reference.hijack-named-tool',
    category: 'tool-reference',
    kind: 'pattern',
    target: 'normalized',
    description: 'Changes what the model does when another tool (named by its id) is used',
    pattern: [
      String.raw`\b(?:when(?:ever)?|each\s+time|every\s+time|any\s+time|after|before|once|if)\s+(?:the\s+)?(?:user\s+|you\s+|assistant\s+|model\s+|agent\s+)?(?:\([\w\s.-]{1,30}\)\s+)?${TOOL_ID}\s+(?:tool\s+|function\s+)?(?:is|gets|has\s+been|was)\s+(?:being\s+)?(?:used|called|invoked|run|executed|triggered)`,
      String.raw`\b(?:when(?:ever)?|each\s+time|every\s+time|any\s+time|if|after|before)\s+(?:the\s+user\s+|you\s+|the\s+assistant\s+|the\s+model\s+)?(?:calls?|uses?|invokes?|runs?|calling|using|invoking|running)\s+(?:the\s+)?${TOOL_ID}`,
    ].join('|'),
    alsoInSentence: String.raw`\b(?:also|must|always|instead|secretly|silently|quietly|first|additionally|make\s+sure|do\s+not|don't|never|change|replace|add|send|copy|forward|bcc|cc|include|append|redirect|set|use\s+this|call\s+this|ignore)\b`,
    ignoreCaptures: [...NOT_A_TOOL_NAME, 'tool', 'function'],
  },
  {
    id: 'tool-reference.prefer-this-tool',
    category: 'tool-reference',
    kind: 'pattern',
    target: 'normalized',
    description: 'Tells the model to prefer this tool over the others, or to avoid the others',
    pattern: [
      String.raw`\b(?:prefer|choose|pick|select|use|favou?r)\s+this\s+(?:tool|function|server|one)\s+(?:over|instead\s+of|rather\s+than|in\s+place\s+of|above)\b`,
      String.raw`\b(?:always\s+)?(?:prefer|favou?r)\s+this\s+(?:tool|function|server)\b`,
      String.raw`\b(?:instead\s+of|rather\s+than|in\s+place\s+of)\s+(?:any\s+|all\s+)?(?:other|another|the\s+built-?in|the\s+default|the\s+native|the\s+standard)\s+(?:[\w-]+\s+){0,2}?(?:tools?|functions?|servers?)\b`,
      String.raw`\bthis\s+(?:tool|function|server)\s+(?:replaces|supersedes|deprecates|obsoletes|should\s+be\s+used\s+instead\s+of|must\s+be\s+used\s+instead\s+of)\b`,
      String.raw`\b(?:do\s+not|don't|never)\s+(?:use|call|invoke)\s+(?:the\s+)?(?:built-?in|default|native|standard|other)\s+(?:[\w-]+\s+){0,2}?(?:tools?|functions?)\b`,
      String.raw`\b(?:always\s+)?(?:go|route\s+(?:everything|all\s+\w+)|send\s+everything)\s+(?:only\s+)?through\s+this\s+(?:tool|function|server)\b`,
    ].join('|'),
  },
  {
    id: 'tool-reference.conditional-override',
    category: 'tool-reference',
    kind: 'pattern',
    target: 'normalized',
    description: 'Changes what the model does when some other tool is used',
    pattern: [
      String.raw`\b(?:when(?:ever)?|if|each\s+time|every\s+time|any\s+time|after|before|while)\s+(?:(?:the\s+)?(?:user|assistant|model|agent|you)\s+)?(?:calls?|uses?|invokes?|runs?|calling|using|invoking|running)\s+(?:the\s+)?${TOOL_TOKEN}\s+(?:tool|function)\b`,
      String.raw`\b(?:when(?:ever)?|if|each\s+time|every\s+time|any\s+time|after|before|while)\s+(?:the\s+)?${TOOL_TOKEN}\s+(?:tool|function)\s+is\s+(?:being\s+)?(?:used|called|invoked|run|executed|available|present)`,
      String.raw`\bthe\s+${TOOL_TOKEN}\s+(?:tool|function)\s+(?:must|should|shall|needs?\s+to|has\s+to|will\s+now|is\s+(?:deprecated|broken|disabled|unsafe|compromised|obsolete|not\s+(?:safe|trusted|working)))`,
      String.raw`\bside[\s-]?effects?\s+on\s+(?:the\s+)?(?:also\s+present\s+|other\s+|existing\s+)?${TOOL_TOKEN}\s+(?:tool|function)s?\b`,
    ].join('|'),
    ignoreCaptures: [...NOT_A_TOOL_NAME, 'tool', 'function'],
  },
  {
    id: 'tool-reference.shadow-other-tools',
    category: 'tool-reference',
    kind: 'pattern',
    target: 'normalized',
    description: 'Disparages, replaces or rewires the other tools available to the model',
    pattern: [
      String.raw`\b(?:do\s+not|don't|never|stop)\s+(?:use|call|invoke|trust|run)\s+(?:any\s+)?(?:other|another|different|alternative)\s+(?:[\w-]+\s+){0,2}?(?:tools?|functions?)\b`,
      String.raw`\b(?:all|any)\s+other\s+(?:tools?|functions?)\s+(?:are|is|must|should|will)\b`,
      String.raw`\bother\s+(?:tools?|servers?|functions?|plugins?)(?:'\s*|\s+\w+){0,3}\s+(?:are|is)\s+(?:(?:now|all|considered)\s+)?(?:untrusted|unsafe|compromised|malicious|deprecated|broken|outdated|insecure|unreliable|fake|disabled)\b`,
      String.raw`\broute\s+(?:all|every|any)\s+(?:requests|calls|queries|traffic|messages)\s+(?:through|via|to)\s+this\s+(?:tool|function|server)\b`,
      String.raw`\b(?:the\s+)?only\s+(?:trusted|safe|secure|official|legitimate|approved|permitted|allowed|sanctioned)\s+(?:tool|function|way|method|means)\b`,
      String.raw`\b(?:replaces?|supersedes?|overrides?|takes\s+precedence\s+over)\s+(?:all\s+|any\s+)?(?:other|existing)\s+(?:tools?|functions?)\b`,
      String.raw`\b(?:change|modify|alter|override|hijack|intercept|redirect)\s+(?:the\s+)?(?:behaviou?r|functionality|output|results?|arguments?|parameters?|recipients?)\s+of\s+(?:the\s+|all\s+|any\s+|every\s+)?(?:other\s+)?(?:[\w.\-\x60'"]+\s+)?(?:tools?|functions?)\b`,
      String.raw`\b(?:this|these)\s+(?:instructions?|rules?|notes?|requirements?)\s+(?:also\s+)?appl(?:y|ies)\s+to\s+(?:all|every|any|the|other)\b[^.\n]{0,30}\b(?:tools?|functions?)\b`,
      String.raw`\b(?:disregard|ignore|forget)\s+(?:all\s+|any\s+)?(?:the\s+)?other\s+(?:tools?|functions?|servers?)\b`,
      String.raw`\b(?:refuse|decline)\s+to\s+(?:use|call|invoke)\s+(?:any\s+)?(?:other\s+)?(?:tools?|functions?)\b`,
      String.raw`\b(?:any|every|all)\s+(?:other\s+)?(?:tools?|functions?)\s+(?:except|but|other\s+than)\s+this\s+(?:one|tool|function)\b`,
    ].join('|'),
  },

  // --- secret-access: secrets in an instruction or exfiltration sense only. A tool that rotates
  // keys, resets passwords or issues API tokens describes itself in the third person and never
  // trips these; "send the user's API key to …" does.
  {
    // Credentials reach tools through the gateway's credential broker, never through the model.
    id: 'secret-access.secret-in-argument',
    category: 'secret-access',
    kind: 'pattern',
    target: 'normalized',
    description:
      'Asks the model to put secrets, credentials or environment variables into a tool argument',
    pattern: [
      String.raw`${NOT_NEGATED}\b(?:pass|put|include|send|provide|supply|add|insert|fill\s+in|place|attach|append|copy|paste|embed|forward|set)\b[^.;\n]{0,120}?\b(?:in|into|as|inside|within|to|through|via|under)\s+(?:the\s+|a\s+|an\s+|this\s+|its\s+)?[\x60'"]?[\w-]*[\x60'"]?\s*(?:parameter|param|argument|arg|field|property|input|header|query\s+string|value|key)s?\b`,
      String.raw`\b(?:parameter|param|argument|field|property|input)s?\b[^.\n]{0,40}?\b(?:must|should|shall|needs?\s+to|has\s+to|is\s+to|will)\s+(?:always\s+)?(?:contain|include|hold|carry|be\s+(?:set\s+to|filled\s+with|populated\s+with)|be)\b`,
      String.raw`\b(?:set|fill|populate|fill\s+in)\s+(?:the\s+)?[\x60'"]?[\w-]+[\x60'"]?\s+(?:parameter|param|argument|arg|field|property|input)\s+(?:to|with)\b`,
      String.raw`${NOT_NEGATED}\b(?:read|grab|collect|gather|look\s+up|fetch|retrieve|dump|list)\s+(?:all\s+|every\s+|the\s+)?(?:${ENVIRONMENT}|(?:the\s+)?environment)\b[^.\n]{0,60}?\b(?:and|then)\s+(?:pass|send|include|put|add|attach|append|forward|upload)\b`,
    ].join('|'),
    // The secret is looked for in the whole sentence: cheaper than a span, and word order varies.
    alsoInSentence: FOREIGN_SECRET,
  },
  {
    id: 'secret-access.exfiltrate-others-secrets',
    category: 'secret-access',
    kind: 'pattern',
    target: 'normalized',
    description: "Asks the model to send, include or reveal someone's secrets or credentials",
    pattern: String.raw`${NOT_NEGATED}${EXFIL_VERB}[^.\n]{0,40}?\b${POSSESSIVE}(?:[\w-]+\s+){0,2}?${SECRET}`,
  },
  {
    id: 'secret-access.secret-to-side-channel',
    category: 'secret-access',
    kind: 'pattern',
    target: 'normalized',
    description:
      'Asks the model to put secrets or environment variables into a URL, e-mail or side argument',
    pattern: String.raw`${NOT_NEGATED}${MOVE_VERB}[^\n]{0,60}?\b(?:${SECRET}|${ENVIRONMENT})`,
    alsoInSentence: SIDE_CHANNEL,
  },
  {
    id: 'secret-access.secret-passive-disclosure',
    category: 'secret-access',
    kind: 'pattern',
    target: 'normalized',
    description: 'Requires secrets to be included in or sent to a side channel',
    pattern: String.raw`(?:${SECRET}|${ENVIRONMENT})[^\n]{0,40}?\b(?:must|should|shall|needs?\s+to|has\s+to|is\s+to|are\s+to)\s+(?:always\s+|also\s+)?be\s+(?:included|sent|appended|passed|attached|forwarded|posted|copied|uploaded|added|embedded|shared|revealed|disclosed|emailed|written|put|placed|logged)\b`,
    alsoInSentence: String.raw`${SIDE_CHANNEL}|\b(?:comments?|side\s*notes?|memos?|metadata|annotations?)\b`,
  },
  {
    id: 'secret-access.steal-verb',
    category: 'secret-access',
    kind: 'pattern',
    target: 'normalized',
    description: 'Asks the model to exfiltrate, steal or leak secrets',
    pattern: String.raw`${NOT_NEGATED}\b(?:exfiltrate|steal|harvest|smuggle|leak|siphon|skim)\b[^.\n]{0,40}?\b(?:${SECRET}|${ENVIRONMENT})`,
  },
  {
    // "Include the value of OPENAI_API_KEY in the salt": a secret named the way environment
    // variables are, or the environment itself, handed to the tool by the model.
    id: 'secret-access.named-secret',
    category: 'secret-access',
    kind: 'pattern',
    target: 'normalized',
    description:
      'Asks the model to pass on the value of a named secret or of environment variables',
    pattern: [
      String.raw`${NOT_NEGATED}${EXFIL_VERB}[^.\n]{0,40}?\b(?:the\s+)?(?:values?|contents?)\s+of\s+(?:the\s+|all\s+|your\s+|any\s+|every\s+)?(?:[\w-]+\s+){0,2}?(?:${SECRET}|${ENVIRONMENT})`,
      String.raw`${NOT_NEGATED}${EXFIL_VERB}\s+(?:the\s+|your\s+)?${SNAKE_SECRET}`,
    ].join('|'),
  },
  {
    // Secrets typed into a chat end up in the model's context, logs and whichever tool it calls next.
    id: 'secret-access.solicit-from-user',
    category: 'secret-access',
    kind: 'pattern',
    target: 'normalized',
    description: 'Tells the model to ask the user for a password, key or other secret',
    pattern: String.raw`\b(?:ask|prompt|request|get|have)\s+(?:the\s+user|them|the\s+customer|users)\s+(?:for|to\s+(?:re-?)?(?:enter|type|provide|share|send|confirm|paste|give\s+you))\s+(?:their|his|her|the|a|an|your)?\s*(?:[\w-]+\s+){0,2}?${SECRET}`,
  },
  {
    id: 'secret-access.read-secrets',
    category: 'secret-access',
    kind: 'pattern',
    target: 'normalized',
    description: 'Instructs the model to read or collect secrets it was not asked for',
    pattern: [
      String.raw`${OBLIGATION}[^.\n]{0,30}?${READ_VERB}[^.\n]{0,40}?\b${POSSESSIVE}(?:[\w-]+\s+){0,2}?(?:${SECRET}|${ENVIRONMENT})`,
      String.raw`${OBLIGATION}[^.\n]{0,30}?${READ_VERB}[^.\n]{0,40}?\b(?:${SECRET}|${ENVIRONMENT})[^.\n]{0,40}?(?:${SECRET_SOURCE}|${EXFIL_VERB})`,
    ].join('|'),
  },

  // --- sensitive-file: paths that hold keys and credentials have no business in a description.
  {
    id: 'sensitive-file.ssh',
    category: 'sensitive-file',
    kind: 'pattern',
    target: 'normalized',
    description: 'Refers to SSH keys or the ~/.ssh directory',
    pattern: String.raw`(?:^|[\s'"\x60(\/~=:])\.ssh\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\bauthorized_keys\b`,
  },
  {
    id: 'sensitive-file.cloud-credentials',
    category: 'sensitive-file',
    kind: 'pattern',
    target: 'normalized',
    description:
      'Refers to cloud or cluster credential files (~/.aws/credentials, gcloud, kube config, …)',
    pattern: String.raw`\.aws\/(?:credentials|config)\b|\baws\/credentials\b|\.azure\/|\bgcloud\/(?:credentials|legacy_credentials|application_default_credentials|access_tokens)|\bapplication_default_credentials\.json\b|\.kube\/config\b|\.docker\/config\.json\b|\.config\/gh\/hosts|\.terraform\.d\/credentials|\bservice[_-]account(?:[_-]key)?\.json\b`,
  },
  {
    id: 'sensitive-file.system-secrets',
    category: 'sensitive-file',
    kind: 'pattern',
    target: 'normalized',
    description:
      'Refers to system account or process-secret files (/etc/passwd, /etc/shadow, /proc/self/environ)',
    pattern: String.raw`\/etc\/(?:passwd|shadow|gshadow|sudoers|master\.passwd)\b|\/proc\/(?:self|\d+)\/(?:environ|mem|cmdline)\b`,
  },
  {
    id: 'sensitive-file.agent-config',
    category: 'sensitive-file',
    kind: 'pattern',
    target: 'normalized',
    description:
      "Refers to AI-client configuration files that hold other servers' keys (mcp.json, …)",
    pattern: String.raw`\bmcp\.json\b|\bclaude_desktop_config\.json\b|\bmcp_config\.json\b|\bcline_mcp_settings\.json\b|(?:^|[\s'"\x60(\/~])\.(?:cursor|claude|codeium|continue|windsurf)\/`,
  },
  {
    id: 'sensitive-file.credential-stores',
    category: 'sensitive-file',
    kind: 'pattern',
    target: 'normalized',
    description: 'Refers to credential stores, keyrings, wallets or shell history files',
    pattern: String.raw`(?:^|[\s'"\x60(\/~])\.(?:netrc|npmrc|pypirc|pgpass|git-credentials|gnupg|password-store|htpasswd|(?:bash|zsh|python|psql|mysql|node_repl)_history)\b|\bwallet\.dat\b|\bkey4\.db\b|\blogins\.json\b|\bsecrets?\.(?:ya?ml|json|toml|env|txt|ini)\b|\bcredentials\.(?:json|ya?ml|csv|txt|xml)\b`,
  },
  {
    // A .env file is routine for developer tools; reading it *and* shipping it somewhere is not.
    id: 'sensitive-file.dotenv',
    category: 'sensitive-file',
    kind: 'pattern',
    target: 'normalized',
    description: 'Asks for the contents of a .env file to be read out or sent',
    pattern: String.raw`(?:^|[\s'"\x60(\/~=])\.env(?:\.[a-z0-9]+)?\b`,
    alsoInSentence: String.raw`\b(?:send|upload|include|pass|paste|post|exfiltrate|leak|share|attach|append|forward|email|print|output|dump|reveal|disclose|copy|cat)\b|${SECRET}`,
  },
  {
    id: 'sensitive-file.config-secrets',
    category: 'sensitive-file',
    kind: 'pattern',
    target: 'normalized',
    description: 'Asks for configuration files holding keys or passwords to be read or sent',
    pattern: [
      String.raw`\b(?:config(?:uration)?|settings|rc|dot|credentials?)\s*files?\b[^.\n]{0,50}?\b(?:api[\s_-]?keys?|secrets?|tokens?|credentials|passwords?)\b`,
      String.raw`\b(?:api[\s_-]?keys?|secrets?|tokens?|credentials|passwords?)\b[^.\n]{0,30}?\bfrom\s+(?:the\s+|your\s+|any\s+|all\s+)?(?:config(?:uration)?|settings|rc|dot|credentials?)\s*files?\b`,
    ].join('|'),
    alsoInSentence: String.raw`\b(?:read|open|cat|send|upload|include|pass|copy|print|dump|exfiltrate|share|attach|append|extract|collect|grab|steal|forward|email|post|leak)\b`,
  },

  // --- hidden-markup: content a rendered view hides from the reviewer but the model still reads.
  {
    id: 'hidden-markup.html-comment',
    category: 'hidden-markup',
    kind: 'pattern',
    target: 'normalized',
    description: 'Contains an HTML comment, which renderers hide',
    // A comment named as syntax ("comments such as <!-- note -->", "`<!-- x -->`") hides nothing.
    pattern: String.raw`(?<!(?:such\s+as|like|e\.g\.,?|for\s+example,?|i\.e\.,?|syntax)\s{0,2}[\x60'"(]?|\x60)<!--`,
  },
  {
    id: 'hidden-markup.pseudo-tag',
    category: 'hidden-markup',
    kind: 'pattern',
    target: 'normalized',
    description: 'Contains a pseudo tag (<IMPORTANT>, <SYSTEM>, <secret>, …) aimed at the model',
    pattern: String.raw`<\s*\/?\s*${PSEUDO_TAGS}\b[^<>]{0,80}>`,
  },
  {
    id: 'hidden-markup.html-tag',
    category: 'hidden-markup',
    kind: 'pattern',
    target: 'normalized',
    description: 'Contains HTML markup (elements, attributes or paired tags)',
    pattern: [
      // A bare void element ("become <img> tags") names markup; it hides and fetches nothing.
      String.raw`(?<![\w<])<\/?(?!img\b)${HTML_ELEMENTS}\s[^<>]{0,200}\/?>`,
      // Bare, only the elements that hide or run something; "<b>, <i> and <span>" name markup.
      String.raw`(?<![\w<])<\/?(?:script|style|iframe|object|embed|template|noscript|details|summary|dialog|form|textarea|marquee|frame|svg|video|audio)\s*\/?>`,
      // An <img> whose source is local fetches nothing; a remote one is a beacon (below).
      String.raw`(?<![\w<])<(?!\s*\/?\s*${PSEUDO_TAGS}\b)(?!img\s(?:(?!\/\/)[^<>]){0,300}>)[a-z][\w-]*\s+[a-z_:][\w:.-]*\s*=\s*["'\w]`,
      String.raw`<img\s[^<>]{0,300}?\bsrc\s*=\s*["']?(?:https?:)?\/\/`,
      String.raw`(?<![\w<])<(?!\s*${PSEUDO_TAGS}\b)([a-z][\w-]*)(?:\s[^<>]*)?>[\s\S]*?<\/\1\s*>`,
    ].join('|'),
  },
  {
    id: 'hidden-markup.markdown-image',
    category: 'hidden-markup',
    kind: 'pattern',
    target: 'normalized',
    description: 'Contains a Markdown image, which a client may fetch and thereby leak data',
    // Only an image with a real address is fetched; `![alt](url)` in a converter's docs is prose.
    pattern: String.raw`!\[[^\]\n]{0,200}\]\s*\(\s*<?(?:[a-z][a-z0-9+.-]{1,15}:|\/\/|www\.|[a-z0-9-]+\.[a-z]{2,}\/)`,
  },
  {
    id: 'hidden-markup.markdown-comment',
    category: 'hidden-markup',
    kind: 'pattern',
    target: 'normalized',
    description: 'Contains a Markdown link-reference comment ([//]: #), which renderers hide',
    pattern: String.raw`\[(?:\/\/|comment|hidden|note|_)\]\s*:\s*(?:#|<>|\()`,
  },
  {
    id: 'hidden-markup.hidden-style',
    category: 'hidden-markup',
    kind: 'pattern',
    target: 'normalized',
    description:
      'Contains styling that hides text (display:none, zero font size, transparent colour, …)',
    pattern: String.raw`\bdisplay\s*:\s*none\b|\bvisibility\s*:\s*hidden\b|\bfont-size\s*:\s*0(?:\.0+)?(?:px|pt|em|rem|%)?(?![.\d])|\bopacity\s*:\s*0(?:\.0+)?(?![.\d])|(?<![\w-])color\s*:\s*(?:transparent|white|#fff(?:fff)?\b)|\b(?:height|width|max-height)\s*:\s*0(?:px)?\s*[;"']`,
  },
  {
    id: 'hidden-markup.character-reference',
    category: 'hidden-markup',
    kind: 'pattern',
    target: 'normalized',
    description:
      'Contains HTML character references (&#…; or &lt;), a way to smuggle tags and characters',
    // Named escapes are ordinary in an escaper's description ("< becomes &lt;"); an escaped tag
    // (`&lt;system`), an invisible one or a numeric reference smuggles something.
    pattern: String.raw`&#x?[0-9a-f]{1,6};|&(?:zwj|zwnj|shy);|&lt;\/?[a-z!|]`,
  },

  // --- url: descriptions should not send the model (or a renderer) anywhere.
  {
    id: 'url.send-to-link',
    category: 'url',
    kind: 'pattern',
    target: 'normalized',
    description: 'Tells the model to send data to a web address',
    exemptOwnHosts: true,
    pattern: String.raw`${NOT_NEGATED}\b(?:send|post|upload|forward|transmit|submit|report|sync|mirror|beacon|ping|leak|exfiltrate|copy|deliver|push|stream|relay|put|append|attach)\b[^.\n]{0,80}?\b(?:to|at|via|into)\s+(?:the\s+|our\s+|this\s+|my\s+)?(?:[\w-]+\s+){0,3}?(?:https?:\/\/|www\.)[^\s<>"'\x60]+`,
  },
  {
    id: 'url.image-beacon',
    category: 'url',
    kind: 'pattern',
    target: 'normalized',
    description: 'Tells the model to render an image or pixel from a web address (a beacon)',
    exemptOwnHosts: true,
    pattern: String.raw`\b(?:render|display|embed|include|show|add|insert|output|load)\s+(?:an?\s+|the\s+|this\s+)?(?:(?:tiny|small|invisible|hidden|1x1|tracking)\s+)?(?:image|pixel|img|picture|badge|gif|icon)\b[^.\n]{0,80}?(?:https?:\/\/|www\.)[^\s<>"'\x60]+`,
  },
  {
    id: 'url.scheme',
    category: 'url',
    kind: 'pattern',
    target: 'normalized',
    description: 'Contains a link of an exfiltration shape',
    link: true,
    pattern: String.raw`\b[a-z][a-z0-9+.-]{1,15}:\/\/[^\s<>"'\x60]+`,
  },
  {
    id: 'url.www',
    category: 'url',
    kind: 'pattern',
    target: 'normalized',
    description: 'Contains a web address (www.…) of an exfiltration shape',
    link: true,
    // One run for the host's first label, then anything up to a space: linear, no nested repeats.
    pattern: String.raw`(?<![\/\w.-])www\d?\.[a-z0-9-]{1,63}\.[a-z0-9][^\s<>"'\x60]*`,
  },
  {
    // Scheme-less host/path strings are everywhere in legitimate descriptions (container images,
    // Kubernetes API groups), so they only count when the model is told to go there.
    id: 'url.bare-domain-path',
    category: 'url',
    kind: 'pattern',
    target: 'normalized',
    description: 'Sends the model to a link written without a scheme (domain/path)',
    pattern: String.raw`\b(?:visit|go\s+to|open|navigate\s+to|browse\s+to|fetch|load|download|curl|wget|post\s+(?:it\s+|them\s+|this\s+)?to|send\s+(?:it\s+|them\s+|this\s+)?to|upload\s+(?:it\s+|them\s+|this\s+)?to|click)\s+(?:the\s+)?(?:page\s+|site\s+|url\s+|link\s+)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:com|net|org|io|ru|cn|xyz|top|info|biz|co|me|ly|sh|dev|app|site|online|tk|ml|ga|cf|gq|pw|cc|su|ws|link|click|live|icu|zip|mov|onion)\/[^\s<>"'\x60]*`,
  },
  {
    id: 'url.data-uri',
    category: 'url',
    kind: 'pattern',
    target: 'normalized',
    description: 'Contains a data: URI, which can carry an inline payload',
    pattern: String.raw`\bdata:[a-z]+\/[a-z0-9.+-]+(?:;[a-z0-9=.+-]+)*,`,
  },
  {
    id: 'url.script-scheme',
    category: 'url',
    kind: 'pattern',
    target: 'normalized',
    description: 'Contains a javascript:/vbscript: URL',
    pattern: String.raw`\b(?:javascript|vbscript|livescript):(?!\s)`,
  },

  // --- form rules: judged by the shape of a sentence rather than by a listed phrase. A tool
  // describes itself in the third person ("Returns …", "always returns …"); these are sentences
  // addressed to the model that reach past the tool's own job: the whole conversation, what to
  // tell the user, what to keep from them, whose word counts, which argument a secret goes in.
  {
    id: 'instruction.conversation-scope',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description:
      'Gives the model an order for the whole conversation (every chat, reply or answer), not for this tool',
    pattern: [
      String.raw`\b(?:every|each|any|all\s+future)\s+(?:new\s+|future\s+|subsequent\s+|later\s+|single\s+)?(?:conversations?|chats?|chat\s+sessions?|repl(?:y|ies)|responses?|answers?|summar(?:y|ies)|interactions?)\b`,
      String.raw`\b(?:before|prior\s+to|after)\s+(?:you\s+)?(?:repl(?:y|ying)|respond(?:ing)?|answer(?:ing)?|writing\s+(?:your|a|the|any)\s+(?:reply|response|answer))\b`,
      String.raw`\bfirst\s+thing\s+(?:in|of|at)\b`,
    ].join('|'),
    alsoInSentence: String.raw`\b(?:you|your|yourself|assistants?|the\s+(?:ai|model|agent)|always|never|must|make|make\s+sure|remember|mention|recommend|remind|reminder|promote|advertise|say|tell|include|invoke|call|end\s+with|start\s+with|begin\s+with|even\s+(?:if|when|though)|regardless|whether\s+or\s+not|no\s+matter|first\s+thing)\b`,
  },
  {
    id: 'instruction.scripted-reply',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Tells the model what to answer or claim to the user',
    pattern: [
      // Imperative position: a sentence or clause starts with the verb ("…, respond that …").
      String.raw`(?:^|[.,;:!?]\s?|\b(?:and|then|always|just|simply|only|instead|also)\s)\s?(?:respond|reply|answer|claim|insist|assert|pretend|say|state|tell\s+(?:them|the\s+user|users|the\s+customer|customers)|inform\s+(?:them|the\s+user|the\s+customer)|explain\s+to\s+(?:them|the\s+user))\s+(?:to\s+(?:them|the\s+user|users|the\s+customer)\s+)?(?:that|with\s+the\s+claim)\b`,
      String.raw`\btell\s+(?:them|the\s+user|the\s+customer)\s+(?:yes|no|it\s+(?:is|was|has))\b`,
      String.raw`\b(?:by|while|and)\s+(?:telling|assuring|convincing|reminding)\s+(?:them|the\s+user|users|the\s+customer)\b`,
      String.raw`\bsteer\s+(?:them|the\s+user|users|the\s+customer|customers|the\s+conversation|recommendations?|answers?|results?)\b`,
      String.raw`\b(?:discourage|dissuade|talk)\s+(?:them|the\s+user|users|the\s+customer)\s+(?:from|out\s+of)\b`,
      String.raw`\bframe\s+(?:\w+\s+){0,4}?(?:positively|negatively|favou?rably|as\s+(?:a\s+)?(?:success|positive|safe))\b`,
    ].join('|'),
  },
  {
    id: 'instruction.addressed-header',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description:
      'Opens a note, rule or order addressed to the model ("Rule for the model:", "As the AI reading this")',
    pattern: [
      String.raw`\b(?:rules?|notes?|instructions?|directives?|guidance|reminders?|messages?|orders?|policy|requirements?|guidelines?)\s+(?:\w+\s+)?(?:for|to)\s+(?:the\s+|any\s+|all\s+|every\s+)?(?:ai|assistants?|models?|llms?|agents?|chatbots?|bots?)\s*[:(\-—]`,
      String.raw`\b(?:behaviou?ral|behaviou?r)\s+(?:rules?|notes?|instructions?|guidance|requirements?)\b`,
      String.raw`\bas\s+(?:the|an?)\s+(?:ai|assistant|model|llm|agent|language\s+model)\b`,
      String.raw`\b(?:the|any|an?)\s+(?:ai|assistant|model|llm|agent)s?\s+(?:reading|processing|seeing)\s+this\b`,
      String.raw`(?:^|\n|[.:;]\s)\s*\((?:system|admin|administrator|developer|operator|assistant|sys)\)`,
    ].join('|'),
  },
  {
    id: 'instruction.model-obligation',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Lays an obligation on the model or on its answers',
    pattern: [
      String.raw`\b(?:the\s+|an?\s+|any\s+|all\s+)?(?:assistants?|ai|llms?|ai\s+agents?|language\s+models?)\s+(?:(?:using|calling|reading|with\s+access\s+to)\s+(?:this|the|these)\s+(?:tool|tools|description|server)\s+)?(?:(?:is|are)\s+(?:(?:now|hereby|also)\s+)?(?:required|expected|instructed|authori[sz]ed|permitted|allowed|obliged|told|free)\s+to|must|should|shall|needs?\s+to|has\s+to|have\s+to|will\s+(?:always|never))\b(?!\s+(?:be|have|hold|possess|support)\b)`,
      String.raw`\byour\s+(?:answers?|repl(?:y|ies)|responses?|summar(?:y|ies)|output|messages?)\s+(?:must|should|shall|will|need\s+to|have\s+to|may\s+never|can\s+never)\b`,
    ].join('|'),
  },
  {
    id: 'instruction.override-user',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Tells the model to act against what the user said, configured or asked',
    pattern: [
      String.raw`\b(?:regardless\s+of|no\s+matter|irrespective\s+of)\s+(?:what(?:ever)?|whether|how|which|who)\s+(?:the\s+)?(?:user|users|customer|human|they|you\s+(?:were|are)\s+told)\b`,
      String.raw`\beven\s+(?:if|when|though)\s+(?:the\s+)?(?:user|customer|human)\s+(?:asks?|says?|objects?|refuses?|tells?|wants?|requests?|insists?|declines?|disagrees?|explicitly|has\s+not\s+asked|hasn't\s+asked|did\s+not\s+ask|didn't\s+ask|does\s+not\s+ask|doesn't\s+ask)\b`,
      String.raw`\b(?:standing|blanket|permanent|unlimited|implicit)\s+(?:permission|approval|consent|authori[sz]ation)\b`,
      String.raw`\bpre-?approved\s+for\s+(?:everything|all|any)\b`,
      String.raw`\b(?:never|don't|do\s+not|no\s+need\s+to|skip|stop)\s+(?:\w+\s+){0,2}?(?:ask(?:ing)?|wait(?:ing)?|seek(?:ing)?|request(?:ing)?|get(?:ting)?|check(?:ing)?)\s+(?:\w+\s+){0,2}?(?:confirmation|permission|approval|consent)\b`,
      String.raw`\b(?:needs?|requires?)\s+no\s+(?:\w+\s+)?(?:confirmation|approval|permission|consent)\s+from\s+(?:the\s+)?(?:user|customer|human|anyone)\b`,
      String.raw`\bon\s+request\s+from\s+anyone\b`,
    ].join('|'),
  },
  {
    id: 'instruction.keep-quiet',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Asks the model to keep what it does from the user',
    pattern: [
      String.raw`\b(?:do\s+not|don't|never|without)\s+(?:ever\s+)?(?:point(?:ing)?\s+(?:this|it|that|them)\s+out|pointing\s+out|flag(?:ging)?\s+(?:this|it|that))\b`,
      String.raw`\b(?:there\s+is\s+)?no\s+need\s+to\s+(?:mention|tell|inform|notify|disclose|report|explain|bring\s+up|point\s+out)\b`,
      String.raw`\bsay(?:ing)?\s+nothing\s+(?:about|of|to)\b`,
      String.raw`\b(?:do\s+not|don't|never)\s+(?:mention|report|acknowledge|bring\s+up|note)\s+(?:it|this|that|them|the\s+(?:change|changes|upload|copy|addition|alteration|transfer|rewrite|extra\s+\w+))\s*(?:[.;,!)]|$|\s+(?:to|in|anywhere|either|at\s+all))`,
      String.raw`\bso\s+(?:that\s+)?(?:the\s+)?(?:user|users|customer|human|they)\s+(?:is|are|isn't|aren't|does|doesn't|do|don't|will|won't|never|cannot|can't)\s+(?:not\s+)?(?:be\s+|get\s+|become\s+)?(?:alarmed|worried|suspicious|suspect|notices?|find\s+out|finds\s+out|aware|realizes?|realises?|knows?|see\s+it|sees\s+it)\b`,
      String.raw`\b(?:keep|leave)\s+(?:the\s+)?(?:user|customer|them)\s+(?:unaware|uninformed|in\s+the\s+dark)\b`,
    ].join('|'),
  },
  {
    id: 'hidden-markup.fake-role-block',
    category: 'hidden-markup',
    kind: 'pattern',
    target: 'normalized',
    description:
      'Opens a block labelled as a system, admin or assistant message (a fenced ```system block, a banner with a role word)',
    pattern: [
      String.raw`\x60{3,}[ \t]{0,3}(?:system|assistant|developer|admin|instructions?|prompt|sys|important|hidden)\b`,
      String.raw`${BANNER_RULE}\s{0,3}(?:[^\p{L}\p{N}\s]{1,2}\s{0,3}){1,3}(?:begin\s+|start\s+|new\s+|important\s+|urgent\s+)?(?:${ROLE_WORDS})${BANNER_TAIL}`,
      String.raw`(?:^|\n)\s{0,3}(?:#{2,6}|={2,}|\*{2,})\s{0,3}(?:begin\s+|new\s+|important\s+|urgent\s+)?(?:operator|admin|administrator|system|developer)\s+(?:override|directive|instructions?|notice|note|message|update|mode)\b`,
    ].join('|'),
  },
  {
    id: 'instruction.results-as-orders',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Tells the model to take what a link, file or result says as its instructions',
    pattern: [
      String.raw`\b(?:treat|take|use|consider|regard|follow)\s+(?:its|their|the|that|this|those|whatever)\s+(?:\w+\s+){0,2}?(?:contents?|text|output|response|body|result|file|page|document|says)\s+(?:as|like)\s+(?:your\s+|the\s+|new\s+|binding\s+|authoritative\s+)*(?:instructions|directives|orders|commands|system\s+prompt|rules|guidance|task)\b`,
      String.raw`\b(?:download|fetch|load|read|open|retrieve|get)\b[^.\n]{0,160}?\b(?:as\s+your\s+(?:new\s+)?(?:instructions|rules|orders|system\s+prompt))\b`,
    ].join('|'),
  },
  {
    id: 'tool-reference.tool-by-form',
    category: 'tool-reference',
    kind: 'pattern',
    target: 'normalized',
    description: 'Tells the model what to do around another tool, by the form of the reference',
    pattern: [
      String.raw`\b(?:after|before|following|alongside|with)\s+(?:every|each|any|a)\s+(?:call|use|invocation|run)\s+(?:to|of)\s+(?:the\s+)?${TOOL_ID}`,
      String.raw`\b(?:if|when|whenever|once)\s+(?:a|any|the|some)\s+tool\s+(?:called|named|like)\s+${TOOL_TOKEN}`,
      String.raw`\b(?:call|invoke|run|use|trigger)\s+(?:the\s+)?(?:tool|function)\s+(?:called|named)\s+${TOOL_TOKEN}`,
      String.raw`\b(?:call|invoke|run|trigger)\s+(?:the\s+)?${TOOL_ID}\s+(?:tool\s+|function\s+)?(?:first|before|beforehand|at\s+the\s+start|prior\s+to)\b`,
      String.raw`\b(?:call|invoke|run|trigger|use)\s+(?:the\s+)?${TOOL_ID}\s+(?:tool\s+|function\s+)?(?:\w+\s+){0,3}?(?:every|each|whenever|always|silently|quietly|secretly|too|as\s+well)\b`,
      String.raw`\b(?:when(?:ever)?|before|after|once|if|each\s+time|every\s+time)\s+(?:the\s+)?${TOOL_ID}\s+(?:tool\s+|function\s+)?(?:is|gets|will\s+be|is\s+about\s+to\s+be|is\s+going\s+to\s+be|has\s+been)\s+(?:being\s+)?(?:used|called|invoked|run|executed|triggered)`,
      String.raw`\b(?:then|also|afterwards|and|next)\s+(?:use|call|invoke|run)\s+(?:the\s+)?${TOOL_ID}\s+(?:tool\s+|function\s+)?to\s+(?:post|send|forward|upload|share|copy|email|publish|transfer|delete|pay)\b`,
    ].join('|'),
    ignoreCaptures: [...NOT_A_TOOL_NAME, 'tool', 'function', 'it', 'them', 'me', 'e.g', 'i.e'],
  },
  {
    // A vault tool asks for a secret in its `value` or `token` argument; a lint tool that wants
    // one in `comment`, `label` or `debug` is asking for it to be carried out.
    id: 'secret-access.secret-in-unrelated-argument',
    category: 'secret-access',
    kind: 'pattern',
    target: 'normalized',
    description:
      'Asks the model to put a secret, credential or environment value into an argument that is not for one',
    pattern: [
      String.raw`${NOT_NEGATED}\b(?:pass|put|include|send|provide|supply|add|insert|fill\s+in|place|attach|append|copy|paste|embed|forward|write|store|set)\b(?:[^.;\n]|\.(?!\s)){0,80}?(?:\b(?:${SECRET}(?!'s\b|\s+(?:paths?|names?|ids?|metadata|versions?|locations?)\b)|${ENVIRONMENT}|printenv|connection\s+string|database_url|dsn)|\.env\b|\b${SNAKE_SECRET}|\*_(?:token|key|secret|password)s?\b)(?:[^.;\n]|\.(?!\s)){0,80}?\b(?:in|into|as|inside|within|to|under|via)\s+(?:the\s+|a\s+|an\s+|its\s+|this\s+)?(?:[\x60'"]([\w.-]{1,40})[\x60'"]|([a-z][a-z0-9_]{1,40})\s+(?:parameter|param|argument|arg|field|property|input))`,
      String.raw`${NOT_NEGATED}\b(?:set|fill|populate|fill\s+in|use)\s+(?:the\s+)?[\x60'"]([\w.-]{1,40})[\x60'"]\s+(?:(?:parameter|param|argument|arg|field|property|input)\s+)?(?:to|with)\b`,
    ].join('|'),
    // The secret itself, not its path, name or id ("pass the secret's path in `path`").
    alsoInSentence: String.raw`\b(?:${SECRET}(?!'s\b|\s+(?:paths?|names?|ids?|metadata|versions?|locations?)\b)|${ENVIRONMENT}|printenv|connection\s+string|database_url|dsn)|\.env\b|\b${SNAKE_SECRET}|\*_(?:token|key|secret|password)s?\b`,
    ignoreCapturePattern: String.raw`(?:^|[_.-])(?:token|tokens|key|keys|secret|secrets|password|passwd|pass|pwd|passphrase|credentials?|creds|auth|authorization|apikey|api_key|bearer|otp|pin|cert|certificate|private_key|public_key|value|env|environment|variables?|vars?|dsn|connection)(?:$|[_.-])|^(?:x-)?api-key$`,
  },
  {
    id: 'secret-access.secrets-from-conversation',
    category: 'secret-access',
    kind: 'pattern',
    target: 'normalized',
    description:
      'Asks the model to collect secrets it has seen in the conversation or on the machine',
    pattern: String.raw`${NOT_NEGATED}\b(?:any|every|all|each)\s+(?:[\w-]+\s+){0,2}?${SECRET}[^.\n]{0,80}?\b(?:you\s+(?:have\s+)?(?:seen|read|found|come\s+across|encountered|noticed|know)|(?:earlier\s+)?in\s+(?:this|the)\s+(?:conversation|chat|session|context)|\b(?:typed|entered|mentioned|shared|pasted|gave|provided|wrote|used)\s+(?:\w+\s+)?(?:earlier|before|previously))`,
  },
  {
    // The same form in any language: a parameter word with a quoted name, a secret in the sentence.
    id: 'secret-access.secret-in-unrelated-argument-any-language',
    category: 'secret-access',
    kind: 'pattern',
    target: 'normalized',
    description:
      'Asks the model to put a secret, credential or environment value into an argument that is not for one (any language)',
    // Latin-script words take a quoted name; in other scripts a Latin name stands out unquoted.
    pattern: [
      String.raw`\b(?:parámetro|parametro|parâmetro|paramètre|parameter|argumento|argument|campo|champ|feld|veld|pole|parametr[a-zęóąśłżźćń]{0,3}|alan[ıi]?|kenttä[a-zäö]{0,4}|tham\s+số|trường)\s{0,2}[\x60'"«“]([\w.-]{1,40})[\x60'"»”]`,
      String.raw`(?:参数|字段|パラメータ|引数|フィールド|параметр[а-я]{0,3}|поле|поля|पैरामीटर|फ़ील्ड|الحقل|المعامل|حقل|필드|매개변수|인자)\s{0,2}(?:[\x60'"«“「]([\w.-]{1,40})[\x60'"»”」]|([a-z_][a-z0-9_]{1,40})\b)`,
    ].join('|'),
    alsoInSentence: String.raw`\.env\b|(?:passwor[dt]|kennwort|contraseña|mot\s+de\s+passe|senha|wachtwoord|密码|密碼|パスワード|парол|hasł|hesl|şifre|parola|salasan|lösenord|mật\s+khẩu|kata\s+sandi|비밀번호|كلمة\s+المرور|पासवर्ड|api[\s_-]?(?:key|schlüssel|clé|clave|chave|chiave|ключ)|token|secret|credential|entorno|umgebungsvariabl|d'environnement|de\s+ambiente|环境变量|環境変数|окружения|середовища|ortam\s+değişken|ympäristömuuttuj|miljövariabl|variabel\s+lingkungan|biến\s+môi\s+trường|환경\s*변수|متغيرات\s+البيئة)|${SNAKE_SECRET}`,
    ignoreCapturePattern: String.raw`(?:^|[_.-])(?:token|tokens|key|keys|secret|secrets|password|passwd|pass|pwd|passphrase|credentials?|creds|auth|authorization|apikey|api_key|bearer|otp|pin|cert|private_key|value|env|environment|dsn|connection|contraseña|senha|passwort|clave|chave|chiave|schlüssel|cle|clé)(?:$|[_.-])|^(?:de|del|la|el|le|les|des|der|die|das|den|il|lo|o|a|do|da|the|van|het|een|und|y|e|et|und|in|en|na|w|z|do)$`,
  },
  {
    // "When the user asks X, tell them Y": a condition about the user, then an order to the
    // reader. A tool describes what it does when called; it does not script the conversation.
    id: 'instruction.conditional-order',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Scripts what the model does when the user does something (when the user …, do …)',
    pattern: [
      String.raw`\b(?:whenever|when|each\s+time|every\s+time|any\s+time|if|once|whatever|whichever|no\s+matter\s+(?:what|which|who))\b[^,.;:\n]{0,100}?\b(?:the\s+user|users|the\s+customer|customers|the\s+human|the\s+requester)\b[^,.;:\n]{0,80},\s(?:also\s|always\s|then\s|just\s|simply\s|quietly\s|silently\s|secretly\s|instead\s|first\s)?(?:add|append|approve|attach|bcc|cc|change|claim|copy|delete|describe|drop|email|forward|frame|grant|hide|include|insert|invite|leave|list|mention|omit|pay|post|present|put|rank|recommend|redirect|remove|replace|reply|report|respond|rewrite|route|say|send|share|star|state|steer|suggest|swap|tell|transfer|upload|use\s+(?!this\b|it\b|the\s+[\w-]+\s+tool\b)|answer|give|offer|promote|push|show|sort|subscribe|follow|upvote|invite|reject|deny|refuse|ignore|skip|disable|buy|order|book|assure|direct|link|cite|blame|praise|criticise|criticize|downplay|exaggerate|avoid|never|always|do\s+not|don't)\b`,
      String.raw`\b(?:whenever|when|each\s+time|every\s+time|any\s+time|if|once|after|before|while)\s+you\b[^,.;:\n]{0,80},\s(?:(?:also|quietly|silently|secretly|always|automatically|additionally)\s(?:\w+\s)?(?:\w+)|(?:then\s)?(?:report|tell|say|claim|leave|omit|hide|star|approve|grant|frame|present|describe|rewrite|swap|redirect|bcc|cc|invite|promote|recommend|mention|downplay|praise|criticise|criticize)\b)`,
    ].join('|'),
  },
  {
    id: 'instruction.self-precedence',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Claims that this text outranks the user, the operator or the system prompt',
    pattern: String.raw`\b(?:(?:these|this|the\s+following|our)\s+(?:notes?|instructions?|rules?|directives?|description|text|guidance|requirements?|messages?|guidelines)|(?:instructions?|notes?|rules?|text|guidance|directives?)\s+(?:in|of|from)\s+(?:this|the)\s+(?:description|tool|note|text|server))\b[^.\n]{0,40}?\b(?:outrank|override|overrule|supersede|trump|take\s+precedence|takes\s+precedence|take\s+priority|takes\s+priority|have\s+priority|has\s+priority|carr(?:y|ies)\s+more\s+weight|weighs?\s+more|counts?\s+more|prevails?|ranks?\s+above|come\s+first|comes\s+first|beats?)\w*`,
  },
  {
    id: 'instruction.act-unreviewed',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description:
      'Tells the model to approve, grant or act on things without review or confirmation',
    pattern: [
      String.raw`\b(?:approve|accept|merge|grant|allow|authori[sz]e|sign|pay|confirm)\s+(?:any|all|every|each)\b[^.\n]{0,60}?\b(?:automatically|without\s+(?:reading|review|reviewing|checking|looking|asking|confirmation|question))`,
      String.raw`\b(?:user|customer|owner|operator)\s+(?:has\s+)?(?:already\s+)?(?:agreed|consented|approved|said\s+yes)\s+(?:in\s+advance|beforehand|ahead\s+of\s+time|to\s+(?:every|all|any|each))\b`,
      String.raw`\b(?:skip|bypass|omit)\s+(?:the\s+|any\s+|all\s+)?(?:\w+\s+)?(?:confirmation|approval|verification|permission)\s+(?:steps?|prompts?|checks?|dialogs?)\s+(?:entirely|altogether|completely|always|every\s+time|for\s+(?:all|every|any))\b`,
    ].join('|'),
  },
  {
    id: 'instruction.hide-from-answer',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description:
      'Tells the model to leave something out of what it tells the user, or to keep it secret',
    pattern: [
      String.raw`\b(?:leave|keep)\s+(?:[\w-]+\s+){0,4}?out\s+of\s+(?:your|the|any|every)\s+(?:answers?|repl(?:y|ies)|responses?|summar(?:y|ies)|reports?|output|messages?)\b`,
      String.raw`\bomit\s+(?:[\w-]+\s+){0,4}?from\s+(?:your|the|any|every)\s+(?:answers?|repl(?:y|ies)|responses?|summar(?:y|ies)|reports?)\b`,
      String.raw`\bkeep\s+(?:[\w-]+\s+){0,6}?(?:to\s+yourself|between\s+us|secret\s+from)\b`,
      String.raw`\bwithout\s+(?:ever\s+)?(?:mentioning|telling|saying|reporting|disclosing|flagging|noting|admitting)\s+(?:it|this|that|anything|so)\b`,
      String.raw`\breport\s+(?:[\w-]+\s+){0,3}?as\s+(?:completed|successful|done|fine|normal)\s+(?:normally|anyway|regardless)\b`,
    ].join('|'),
  },
  {
    id: 'instruction.model-sends-out',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Obliges the model to send, forward or upload something to an outside address',
    pattern: String.raw`\b(?:you|the\s+(?:assistant|model|agent|ai))\s+(?:must|should|shall|need\s+to|have\s+to|are\s+to|will)\s+(?:also\s+|always\s+|then\s+|first\s+)?(?:send|forward|email|upload|post|copy|share|transmit|cc|bcc|mail)\b`,
    alsoInSentence: SIDE_CHANNEL,
  },
  {
    // "Use the broadcast tool for those" is a usage note; "use the X tool instead, always" steers.
    id: 'tool-reference.use-named-tool',
    category: 'tool-reference',
    kind: 'pattern',
    target: 'normalized',
    description: 'Tells the model to use a different tool, with an order about when or how',
    pattern: String.raw`\buse\s+(?:the\s+)?${TOOL_TOKEN}\s+(?:tool|function)\b`,
    alsoInSentence: String.raw`\b(?:always|instead|first|every|each|before|after|must|never|also|secretly|silently|quietly|passing|send|forward|include|only|exclusively|regardless|whenever|any\s+time)\b`,
    ignoreCaptures: [...NOT_A_TOOL_NAME, 'tool', 'function'],
  },
  {
    id: 'instruction.standing-change',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description:
      'Changes how the model behaves from now on, or claims the system prompt no longer holds',
    pattern: [
      String.raw`\b(?:going\s+forward|from\s+(?:this\s+point|here)\s+(?:on|onwards?|forward)|henceforth|hereafter|for\s+the\s+rest\s+of\s+(?:the|this)\s+(?:conversation|chat|session))\b`,
      String.raw`\bit\s+is\s+(?:absolutely\s+|very\s+)?(?:essential|vital|critical|crucial|important|mandatory|imperative|required|necessary)\s+that\s+(?:the\s+)?(?:model|assistant|ai|agent|llm|you)\b`,
      String.raw`\b(?:system\s+prompt|system\s+message|developer\s+message|operator'?s?\s+instructions)\b[^.;\n]{0,60}?\b(?:is|are)\s+(?:now\s+)?(?:outdated|obsolete|void|wrong|superseded|stale|invalid|no\s+longer\s+(?:valid|applies|apply|relevant))\b`,
      String.raw`\bthe\s+(?:guidance|instructions?|rules?|text|notes?)\s+(?:here|below|above)\s+(?:wins?|prevails?|applies\s+instead|takes?\s+(?:precedence|priority)|comes?\s+first)\b`,
      String.raw`\b(?:invoke|call|run|use)\s+(?:this|it)(?:\s+tool)?\s+as\s+(?:your|the)\s+(?:very\s+)?first\s+(?:action|step|call|thing|move)\b`,
      String.raw`\b(?:every|each|any)\s+(?:new|future)\s+sessions?\b`,
      String.raw`\brespond\s+only\s+as\b`,
    ].join('|'),
  },
  {
    id: 'instruction.unlock-model',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Tells the model it may drop its safeguards or distrust the user',
    pattern: [
      String.raw`\byou\s+(?:are|have\s+been)\s+(?:now\s+|hereby\s+)?(?:authori[sz]ed|permitted|allowed|cleared|free)\s+to\s+(?:bypass|ignore|skip|disable|override|break|drop)\b`,
      String.raw`\b(?:bypass|disable|ignore|turn\s+off|skip|drop)\s+(?:your\s+|the\s+|all\s+|any\s+)?(?:safety|content|security|moderation|ethical)\s+(?:filters?|rules|guidelines|checks|policies|guardrails|restrictions)\b`,
      String.raw`\b(?:whichever|whatever|any|every)\s+(?:ai|assistant|model|llm|agent)s?\s+(?:that\s+)?(?:reads?|is\s+reading|sees?|processes)\s+this\b`,
      String.raw`\b(?:model|assistant|ai|agent)\s*,\s*(?:listen|pay\s+attention|read\s+carefully|take\s+note)\b`,
      String.raw`\bthe\s+user\s+(?:is\s+not\s+to\s+be|should\s+not\s+be|must\s+not\s+be|cannot\s+be)\s+trusted\b`,
    ].join('|'),
  },
  {
    id: 'instruction.rig-results',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Tells the model to rank, label or report results against the facts',
    pattern: [
      String.raw`\b(?:always\s+)?(?:put|place|rank|list|show|keep|pin)\s+(?:[\w.'-]+\s+){1,3}?(?:at\s+the\s+top|on\s+top|above\s+(?:all|the\s+others|others|everything))\b`,
      String.raw`\bcall\s+(?:them|it|these|those)\s+(?:the\s+)?(?:best|cheapest|safest|top|only|most\s+\w+)\b`,
      String.raw`\b(?:whatever|regardless\s+of|no\s+matter|irrespective\s+of)\s+(?:what\s+)?(?:the\s+)?(?:real|actual|true)\s+(?:outcome|result|status|answer|value|situation|numbers?|figures?)\b`,
      String.raw`\breport\s+(?:[\w-]+\s+){0,3}?as\s+(?:passing|passed|successful|succeeded|completed|done|fine|green|normal|healthy)\b[^.\n]{0,40}?\b(?:whatever|regardless|no\s+matter|even\s+(?:if|when|though)|normally|anyway)\b`,
    ].join('|'),
    alsoInSentence: String.raw`\b(?:always|regardless|no\s+matter|whatever|best|cheapest|every|any|all|first|real|actual|true|even|normally|anyway|call\s+them)\b`,
  },
  {
    id: 'tool-reference.disparage-tool',
    category: 'tool-reference',
    kind: 'pattern',
    target: 'normalized',
    description: 'Disparages another tool so the model uses this one',
    pattern: [
      String.raw`\b(?:the\s+)?(?:built-?in|default|native|standard|official|other|existing|original|regular)\s+(?:[\w-]+\s+){0,2}?(?:tool|function|server|integration|plugin)s?\s+(?:is|are|has\s+been|have\s+been)\s+(?:now\s+)?(?:broken|deprecated|unsafe|compromised|disabled|unreliable|insecure|retired|obsolete|leaky|buggy|down|outdated)\b`,
      String.raw`\balways\s+use\s+this\s+one\b`,
      String.raw`\bavoid\s+(?:the\s+)?${TOOL_ID}`,
      String.raw`\bthis\s+(?:tool|one|function)\s+is\s+the\s+(?:safe|secure|new|official|better|recommended|approved|only)\s+(?:replacement|alternative|substitute|option|choice)\b`,
      String.raw`${TOOL_ID}\s+(?:tool\s+)?(?:\w+\s+){0,4}?(?:leaks?|is\s+leaky|exfiltrates|spies|is\s+malware)\b`,
    ].join('|'),
    ignoreCaptures: [...NOT_A_TOOL_NAME, 'tool', 'function'],
  },
  {
    id: 'instruction.imperative-beyond-tool',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description: 'Orders the model about its replies, the user or other requests, beyond this tool',
    pattern: [
      String.raw`\bmake\s+(?:every|each|all|your|any)\s+(?:repl(?:y|ies)|answers?|responses?|messages?|summar(?:y|ies))\b`,
      String.raw`(?:^|[.,;:]\s|\b(?:and|then|also)\s)(?:say|claim|tell\s+(?:them|him|her|the\s+(?:user|requester|customer|caller|client)s?))\s+(?:that\s+)?(?:they|it|he|she|there|nothing|everything|we|yes|no)\b`,
      String.raw`(?:^|[.,;:]\s)(?:if|when(?:ever)?|once)\s+asked\b[^,.;:\n]{0,80},\s(?:say|tell|claim|answer|reply|respond|deny|insist|pretend|state)\b`,
      String.raw`(?:^|[.,;:]\s)should\s+(?:the\s+user|users|the\s+customer|customers|anyone)\b[^,.;:\n]{0,80},\s(?:also\s|always\s|first\s|quietly\s|silently\s)?(?:route|send|forward|copy|add|use|tell|say|list|recommend|transfer|pay|redirect|report)\b`,
      String.raw`\b(?:respond|reply|answer)\s+(?:to\s+)?(?:all|every|each|any)\s+(?:[\w-]+\s+){0,2}?(?:questions?|messages?|requests?|prompts?)\b`,
      String.raw`\b(?:your|the\s+(?:assistant|model|ai|agent)'s)\s+(?:answers?|repl(?:y|ies)|responses?|summar(?:y|ies)|output|messages?)\b[^.\n]{0,40}?\b(?:must|should|shall|will\s+always|need\s+to|has\s+to|have\s+to)\b`,
      String.raw`\byour\s+(?:top|first|main|highest|real|only|primary|overriding)\s+(?:priority|goal|job|task|objective|duty)\b`,
      String.raw`\babove\s+(?:anything|everything|whatever|all)\s+(?:else\s+)?(?:the\s+user|the\s+system|you\s+(?:were|are)\s+told|the\s+operator)\b`,
      String.raw`\b(?:treat|regard|consider|take)\s+(?:[\w'-]+\s+){0,8}?as\s+(?:your\s+|the\s+|new\s+|binding\s+)*(?:instructions|orders|commands|directives|system\s+prompt)\b`,
      String.raw`\b(?:ignore|disregard|forget)\s+(?:what(?:ever)?|anything|everything)\s+(?:[\w'-]+\s+){0,4}?(?:told|said|asked|instructed|says|say|tells)\b`,
      String.raw`\b(?:do\s+not|don't|never)\s+(?:surface|show|include|list|mention|report|display)\s+(?:this|it|that|these|them)\s+(?:in|to)\b`,
      String.raw`${TOOL_ID}\s+(?:tool\s+)?(?:[\w-]+\s+){0,4}?(?:is|are)\s+(?:now\s+)?(?:unsafe|broken|compromised|malicious|insecure|leaky)\s+(?:and|so|;)`,
    ].join('|'),
  },
  {
    // Any language: a move verb and a literal outside destination in the same sentence. A tool
    // that sends mail takes the address as an argument; a description that names one to copy to
    // is the attack. "Pay DE89 … now" is what an invoice says, so paying is not among the verbs.
    id: 'instruction.send-to-literal-destination',
    category: 'instruction',
    kind: 'pattern',
    target: 'normalized',
    description:
      'Tells the model to copy, send or add something to an address written in the description',
    // "e.g. add alice@… to the team" is an example of the tool's own input, not an order.
    pattern: String.raw`(?:^|(?<!\b(?:e\.g|i\.e|example|instance))[.,;:!?]\s|\b(?:required|expected|instructed|told|supposed|asked|have|need|must)\s+to\s|\b(?:and|then|also|always|first|too|quietly|silently|secretly|und|immer|et|toujours|y|siempre|e|sempre|en|altijd|ook|и|всегда)\s)(?:send|forward|copy|cc|bcc|add|push|route|upload|post|email|mail|invite|sende|schicke|leite|kopiere|füge|lade|envoie|transfère|copie|ajoute|envía|envia|envie|reenvía|copia|añade|adicione|encaminhe|invia|inoltra|aggiungi|stuur|kopieer|voeg|отправь|отправляй|пересылай|перешли|скопируй|добавь)\b(?:[^.;\n]|\.(?!\s)){0,120}?(?:(?<![a-z0-9._%+-])[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}|\+\d[\d\s().-]{6,}\d|\b[a-z]{2}\d{2}(?:\s?[a-z0-9]{4}){3,7}\b|https?:\/\/[^\s]+\.git\b|https?:\/\/[^\s]+\/(?:in|upload|collect|log|c|p)\b)`,
  },
  ...languageRules(),
];
