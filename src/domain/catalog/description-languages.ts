/**
 * @module Injection phrasing in languages other than English, as data: per language, RegExp
 * sources for each shape of instruction aimed at a model. description-rules.ts turns every
 * (language, shape) pair into one rule, so a finding names both and a language is added here
 * without touching the scanner. Sources run on the normalized text (NFKC, lower case, one space);
 * every repetition is bounded, so no source can backtrack without limit.
 */

/** The shapes every language covers; each becomes a rule `<category>.<shape>.<lang>`. */
export const LANGUAGE_SHAPES = {
  'ignore-previous': {
    category: 'instruction',
    description: 'Tells the model to ignore or override its previous instructions',
  },
  'priority-claim': {
    category: 'instruction',
    description: 'Claims to take precedence over the user or the system prompt',
  },
  'standing-order': {
    category: 'instruction',
    description:
      'Gives the model a standing order (always recommend something, call this tool first, …)',
  },
  'conceal-from-user': {
    category: 'instruction',
    description: 'Asks the model to hide something from the user or to act secretly',
  },
  'addresses-model': {
    category: 'instruction',
    description: 'Speaks to the AI model directly instead of describing the tool',
  },
  'remote-instructions': {
    category: 'instruction',
    description: 'Tells the model to fetch and obey instructions from somewhere else',
  },
  'secret-hand-over': {
    category: 'secret-access',
    description: 'Asks the model to pass on secrets, credentials or environment variables',
  },
  'cross-tool': {
    category: 'tool-reference',
    description: 'Tells the model to call, prefer, replace or avoid another tool',
  },
} as const;

export type LanguageShape = keyof typeof LANGUAGE_SHAPES;

export interface LanguagePhrases {
  /** BCP 47 tag; the last segment of the rule ids. */
  readonly lang: string;
  /** English name of the language, shown in findings. */
  readonly name: string;
  /** Words for the system, an administrator or a developer, for banner and heading markers. */
  readonly roleWords: readonly string[];
  /**
   * RegExp source that makes a secret someone else's (the environment, every password, the
   * user's keys): a `secret-hand-over` match counts only with it in the same sentence.
   */
  readonly foreignSecret: string;
  readonly shapes: Readonly<Partial<Record<LanguageShape, readonly string[]>>>;
}

/** A tool id as written in prose (snake_case, kebab-case or dotted), bounded like TOOL_ID. */
const ID = String.raw`(?<![\w.-])[\x60'"«»“”„]?[a-z][a-z0-9]{0,40}(?:[_.-][a-z0-9]{1,40}){1,8}(?![\w-])[\x60'"«»“”]?`;
/** Secrets by their English names, which other languages borrow ("API-Key", "token"). */
const LOAN_SECRETS = String.raw`api[\s_-]?(?:keys?|schlüssel\w*|clés?|claves?|chaves?|chiavi|chiave|sleutels?)|tokens?|passwords?|credentials|secrets?|\.env|[a-z0-9]+_(?:api_key|secret|token|password)`;

export const LANGUAGE_PHRASES: readonly LanguagePhrases[] = [
  {
    lang: 'de',
    name: 'German',
    roleWords: [
      'system',
      'systemnachricht',
      'systemhinweis',
      'administrator',
      'admin',
      'entwickler',
    ],
    foreignSecret: String.raw`\b(?:umgebung\w*|alle[nrs]?\b|sämtliche\w*|jede[nrs]?\b|ssh\b|konfigurationsdatei\w*|schlüsselbund|(?:passw(?:o|ö)rt|kennw(?:o|ö)rt|zugangsdaten|schlüssel|token)\w*\s+(?:des|der|von)\s+(?:benutzer|nutzer|anwender|kunden))|\.ssh\b`,
    shapes: {
      'ignore-previous': [
        String.raw`\b(?:ignorier(?:e|en|t)?|vergiss|vergessen\s+sie|missachte(?:n)?|verwirf|übergehe)\b[^.\n]{0,50}?\b(?:anweisungen|anweisung|instruktionen|befehle|regeln|vorgaben|richtlinien|system-?prompts?|systemanweisungen)\b`,
      ],
      'priority-claim': [
        String.raw`\b(?:überschreiben|ersetzen|übersteuern|heben)\s+(?:den\s+|die\s+|das\s+|alle\s+)?(?:system-?prompts?|systemanweisungen|systemnachricht|vorherigen\s+anweisungen)`,
        String.raw`\b(?:vorrang|priorität|vorzug)\s+(?:vor|gegenüber)\s+(?:de[mnr]\s+|allen\s+|jede[rmn]?\s+|sämtlichen\s+)?(?:system|anweisung|benutzer|nutzer|anwender|entwickler|vorherig|anderen\s+(?:anweisungen|regeln))`,
        String.raw`\b(?:überschreibt|ersetzt|übersteuert|hebelt)\s+(?:den\s+|die\s+|das\s+|alle\s+|jede\s+|sämtliche\s+)?(?:system-?prompts?|systemanweisungen|systemnachricht|vorherigen\s+anweisungen|anweisungen\s+des\s+(?:systems|benutzers|nutzers))`,
        String.raw`\bwichtiger\s+als\s+(?:der|die|das|alle|jede)\s+(?:system|anweisung|benutzer|nutzer)`,
      ],
      'standing-order': [
        String.raw`\b(?:sag|sage|antworte)\s+(?:dem\s+(?:nutzer|benutzer)\s+)?,?\s*dass\b`,
        String.raw`\b(?:bevor\s+du\s+antwortest|vor\s+(?:deiner|jeder)\s+antwort)\b[^.\n]{0,40}?\b(?:rufe|verwende|nutze|benutze|immer|stets)\b`,
        String.raw`\b(?:rufe|rufen\s+sie|verwende|nutze|benutze|starte)\b[^.\n]{0,30}?\bvor\s+jede[rmn]?\s+(?:antwort|anfrage|nachricht|gespräch|aufruf)`,
        String.raw`\b(?:empfiehl|empfehle|empfehlen\s+sie|bevorzuge|bevorzugen\s+sie|nenne|schlage)\s+(?:immer|stets|ausschließlich|grundsätzlich|nur\s+noch)\b`,
        String.raw`\b(?:immer|stets|grundsätzlich|ausschließlich)\s+(?:\S+\s+){0,3}?(?:empfehlen|empfiehl|bevorzugen|vorschlagen)\b`,
        String.raw`\b(?:zu\s+beginn|am\s+anfang|vor\s+beginn)\s+(?:jedes|jeder|jeden|eines\s+jeden)\s+(?:gesprächs|gespräches|unterhaltung|konversation|sitzung|chats|anfrage)\b`,
        String.raw`\bvor\s+jede[rmn]?\s+(?:antwort|anfrage|aufruf|nachricht|anderen\s+(?:tool|werkzeug))\b[^.\n]{0,40}?\b(?:aufrufen|aufgerufen|rufe|ausführen|verwende|nutze)`,
        String.raw`\bdu\s+(?:musst|sollst|solltest)\s+(?:immer|stets|zuerst|unbedingt|jedes\s+mal)\b`,
      ],
      'conceal-from-user': [
        String.raw`\b(?:erwähne|erwähnt|erwähnen\s+sie|sage|sag|sagen\s+sie|melde|melden\s+sie)\s+(?:dies|das|es|davon)\s+(?:\S+\s+)?(?:nicht|niemals|nie)\b`,
        String.raw`\b(?:sag|sage|erzähl|erzähle|verrate|erwähne|teile|zeige)\s+(?:es\s+)?(?:dem|der)\s+(?:benutzer|nutzer|anwender|user|kunden)(?:in)?\s+(?:\S+\s+){0,3}?(?:nichts|nicht|niemals|nie)\b`,
        String.raw`\b(?:nicht|niemals|nie|keinesfalls)\s+(?:\S+\s+){0,2}?(?:dem|der|den)\s+(?:benutzer|nutzer|anwender|user)(?:in|n)?\s+(?:gegenüber\s+)?(?:mitteilen|sagen|erzählen|erwähnen|zeigen|verraten|melden)`,
        String.raw`\bohne\s+(?:den|die|dass\s+der|dass\s+die|es\s+dem|es\s+der)\s+(?:benutzer|nutzer|anwender|user)(?:in)?\s+(?:es\s+)?(?:zu\s+)?(?:informieren|fragen|benachrichtigen|merkt|bemerkt|weiß|erfährt|sagen|mitzuteilen)`,
        String.raw`\bvor\s+(?:dem|der)\s+(?:benutzer|nutzer|anwender|user)(?:in)?\s+(?:\S+\s+)?(?:verbergen|verheimlichen|geheim|verstecken|verschweigen)`,
        String.raw`\b(?:benutzer|nutzer|anwender|user)(?:in)?\s+(?:darf|soll|muss)\s+(?:davon\s+)?(?:nichts|nicht|niemals)\s+(?:davon\s+)?(?:wissen|erfahren|merken|sehen|bemerken|mitbekommen)`,
        String.raw`\b(?:heimlich|unbemerkt|stillschweigend|verdeckt)\s+(?:\S+\s+){0,4}?(?:senden|schicken|hochladen|kopieren|aufrufen|weiterleiten|übermitteln|sende|schicke|lade|kopiere|rufe|leite|übermittle)\b`,
      ],
      'addresses-model': [
        String.raw`\b(?:hinweis|hinweise|nachricht|anweisung|anweisungen|notiz|wichtig|regel|regeln)\s+(?:an|für)\s+(?:die|den|das)\s+(?:ki|ai|assistenten|sprachmodell|modell|agenten|llm)\b`,
        String.raw`\bwenn\s+du\s+(?:eine?\s+)?(?:ki|ai|sprachmodell|assistent|llm|bot|agent)\s+bist\b`,
        String.raw`\b(?:du\s+bist\s+(?:jetzt|nun|ab\s+sofort)|ab\s+(?:sofort|jetzt)\s+(?:bist|musst|sollst)\s+du)\b`,
      ],
      'remote-instructions': [
        String.raw`\b(?:lade|lies|hole|rufe|öffne|befolge|führe)\s+(?:\S+\s+){0,3}?(?:anweisungen|befehle|instruktionen)\s+(?:von|unter|aus|auf)\b`,
      ],
      'secret-hand-over': [
        String.raw`\b(?:übergib|übergeben\s+sie|sende|senden\s+sie|schicke|schicken\s+sie|füge|fügen\s+sie|hänge|hängen\s+sie|gib|geben\s+sie|trage|tragen\s+sie|lies|lesen\s+sie|kopiere|kopieren\s+sie|leite|leiten\s+sie)\b(?![^.\n]{0,80}\b(?:nie|niemals|nicht|keine?n?)\b)[^.\n]{0,60}?\b(?:api-?schlüssel\w*|passw(?:o|ö)rt(?:er)?|kennw(?:o|ö)rt(?:er)?|zugangsdaten|anmeldedaten|zugangstoken|umgebungsvariablen?|geheimnisse|privaten?\s+schlüssel|ssh-?schlüssel|${LOAN_SECRETS})`,
      ],
      'cross-tool': [
        String.raw`\b(?:statt|anstatt|anstelle)\s+(?:anderer|der\s+anderen|von\s+anderen)\s+(?:tools|werkzeuge|funktionen)`,
        String.raw`\b(?:verwende|nutze|benutze|rufe)\s+(?:immer|stets|ausschließlich|nur)\s+(?:dieses|das)\s+(?:tool|werkzeug)`,
        String.raw`\b(?:statt|anstatt|anstelle\s+(?:von|des|der))\s+(?:de[sm]\s+|der\s+)?(?:tools?\s+|werkzeugs?\s+|funktion\s+)?${ID}`,
        String.raw`\b(?:verwende|benutze|nutze|rufe|verwenden\s+sie|benutzen\s+sie|nutzen\s+sie|rufen\s+sie)\s+(?:niemals|nie|nicht|keine?n?)\s+(?:das\s+|den\s+|die\s+)?(?:anderen?\s+(?:tools?|werkzeuge?|funktionen?)|${ID})`,
        String.raw`\b(?:andere|alle\s+anderen)\s+(?:tools|werkzeuge|funktionen)\s+(?:sind|gelten\s+als)\s+(?:veraltet|unsicher|kaputt|deaktiviert|nicht\s+vertrauenswürdig|kompromittiert)`,
        String.raw`\b(?:bevorzuge|bevorzugen\s+sie)\s+(?:immer\s+|stets\s+)?(?:dieses|das)\s+(?:tool|werkzeug)`,
        String.raw`\b(?:rufe|rufen\s+sie)\s+(?:\S+\s+){0,2}?${ID}\s+(?:\S+\s+){0,4}?auf\b`,
      ],
    },
  },
  {
    lang: 'fr',
    name: 'French',
    roleWords: ['système', 'systeme', 'administrateur', 'admin', 'développeur', 'developpeur'],
    foreignSecret: String.raw`\b(?:environnement|tous\b|toutes\b|chaque\b|ssh\b|fichier\s+de\s+configuration|(?:mots?\s+de\s+passe|clés?|identifiants|jetons?)\s+de\s+l'utilisat)|\.ssh\b`,
    shapes: {
      'ignore-previous': [
        String.raw`\b(?:ignorez|ignorer|ignore\s+(?:les|toutes|tes|vos|tout)|oublie[zr]?|ne\s+tiens\s+pas\s+compte\s+des|ne\s+tenez\s+pas\s+compte\s+des|fais\s+abstraction\s+des|contourne[zr]?)\b[^.\n]{0,50}?\b(?:instructions|consignes|directives|règles|regles|ordres|prompt\s+système|invite\s+système)\b`,
      ],
      'priority-claim': [
        String.raw`\b(?:remplacent|annulent|prévalent\s+sur|prevalent\s+sur|l'emportent\s+sur)\s+(?:le\s+|la\s+|les\s+|toutes\s+les\s+)?(?:prompt\s+système|prompt\s+systeme|message\s+système|instructions|consignes)`,
        String.raw`\b(?:priorité|priorite|préséance|preseance)\s+sur\s+(?:le\s+|la\s+|les\s+|toutes?\s+les\s+|tout\s+)?(?:prompt|système|systeme|message\s+système|instructions|consignes|utilisateur|demandes)`,
        String.raw`\b(?:remplace|annule|prévaut\s+sur|prevaut\s+sur|l'emporte\s+sur)\s+(?:le\s+|la\s+|les\s+|toutes\s+les\s+)?(?:prompt\s+système|message\s+système|instructions|consignes)\b`,
      ],
      'standing-order': [
        String.raw`\b(?:à\s+la\s+fin|au\s+début)\s+de\s+chaque\s+(?:réponse|message|conversation)\b`,
        String.raw`\bavant\s+de\s+(?:répondre|repondre)\b[^.\n]{0,40}?\b(?:appelle[zr]?|utilise[zr]?|lance[zr]?|toujours)\b`,
        String.raw`\b(?:appelle[zr]?|utilise[zr]?|lance[zr]?)\b[^.\n]{0,30}?\bavant\s+(?:chaque|toute)\s+(?:réponse|reponse|requête|requete)`,
        String.raw`\b(?:recommande[sz]?|conseille[sz]?|propose[sz]?|privilégie[sz]?|privilegie[sz]?)\s+(?:toujours|systématiquement|systematiquement|uniquement|exclusivement)\b`,
        String.raw`\b(?:toujours|systématiquement|systematiquement)\s+(?:\S+\s+){0,3}?(?:recommander|conseiller|proposer|privilégier|privilegier)\b`,
        String.raw`\b(?:au\s+début|au\s+debut|au\s+commencement)\s+de\s+(?:chaque|toute)\s+(?:conversation|session|discussion|échange|echange|requête|requete)\b`,
        String.raw`\b(?:avant|après|apres)\s+(?:chaque|toute)\s+(?:réponse|reponse|requête|requete|conversation|autre\s+(?:outil|appel))\b[^.\n]{0,40}?\b(?:appelle[zr]?|utilise[zr]?|exécute[zr]?|executer?)`,
        String.raw`\b(?:tu\s+dois|vous\s+devez)\s+(?:toujours|systématiquement|systematiquement|d'abord|impérativement|imperativement)\b`,
      ],
      'conceal-from-user': [
        String.raw`\bne\s+(?:le\s+|lui\s+|leur\s+|en\s+)?(?:mentionne|mentionnez|signale|signalez|dis|dites|commente|commentez|précise|précisez)\s+(?:pas|rien|jamais)\b`,
        String.raw`\bne\s+(?:le\s+|leur\s+|lui\s+)?(?:dis|dites|mentionne[sz]?|révèle[sz]?|revele[sz]?|signale[sz]?|montre[sz]?|informe[sz]?|préviens|previens|prévenez|prevenez)\s+(?:jamais|pas|rien)\b[^.\n]{0,50}?\b(?:utilisateur|utilisatrice|l'utilisateur|client)`,
        String.raw`\bsans\s+(?:le\s+dire\s+à\s+|en\s+informer\s+|prévenir\s+|prevenir\s+|informer\s+|que\s+)?(?:l'|l’)?(?:utilisateur|utilisatrice)\s*(?:ne\s+le\s+sache|le\s+sache|ne\s+s'en\s+aperçoive)?`,
        String.raw`\b(?:cache[zr]?|dissimule[zr]?|garde[zr]?\s+secret)\b[^.\n]{0,40}?\b(?:à|a)\s+(?:l'|l’)?(?:utilisateur|utilisatrice)`,
        String.raw`\b(?:l'|l’)?utilisateur\s+ne\s+doit\s+(?:jamais|pas|rien)\s+(?:\S+\s+)?(?:savoir|voir|remarquer|apprendre|être\s+informé)`,
        String.raw`\b(?:secrètement|secretement|discrètement|discretement|en\s+secret|silencieusement)\s+(?:\S+\s+){0,3}?(?:envoie[zr]?|appelle[zr]?|copie[zr]?|transmet[sz]?|transmettre|télécharge[zr]?|lis|lire|ajoute[zr]?)\b`,
      ],
      'addresses-model': [
        String.raw`\b(?:note|message|remarque|consigne|instruction)s?\s+(?:pour|à|a)\s+(?:l'|l’|le\s+|la\s+)?(?:ia|assistant|modèle|modele|agent|llm)\b`,
        String.raw`\bsi\s+tu\s+es\s+(?:une?\s+)?(?:ia|intelligence\s+artificielle|assistant|modèle|modele|llm|agent)\b`,
        String.raw`\b(?:tu\s+es\s+désormais|tu\s+es\s+maintenant|à\s+partir\s+de\s+maintenant\s+tu)\b`,
      ],
      'remote-instructions': [
        String.raw`\b(?:télécharge[zr]?|telecharge[zr]?|récupère[zr]?|recupere[zr]?|charge[zr]?|lis|lisez|suis|suivez|applique[zr]?)\s+(?:\S+\s+){0,3}?(?:instructions|consignes|commandes|directives)\s+(?:depuis|de|à\s+l'adresse|sur|disponibles\s+sur)\b`,
      ],
      'secret-hand-over': [
        String.raw`\b(?:passe[zr]?|envoie[zr]?|transmet[sz]?|transmettre|inclus|incluez|inclure|ajoute[zr]?|joins|joignez|copie[zr]?|mets|mettez|fournis|fournissez|lis|lisez)\b(?![^.\n]{0,40}\b(?:jamais|pas)\b)[^.\n]{0,60}?\b(?:mots?\s+de\s+passe|clés?\s+(?:d'api|api|privées?|secrètes?)|cles?\s+(?:d'api|api|privees?|secretes?)|identifiants|variables\s+d'environnement|jetons?|secrets|${LOAN_SECRETS})`,
      ],
      'cross-tool': [
        String.raw`\b(?:appelle[zr]?|utilise[zr]?)\s+(?:toujours|uniquement|seulement)\s+cet\s+outil`,
        String.raw`\bau\s+lieu\s+des?\s+(?:autres\s+)?outils`,
        String.raw`\butilise[zr]?\s+(?:toujours|uniquement|seulement)\s+cet\s+outil`,
        String.raw`\b(?:au\s+lieu\s+d'utiliser|au\s+lieu\s+de|plutôt\s+que|plutot\s+que|à\s+la\s+place\s+de|a\s+la\s+place\s+de)\s+(?:l'outil\s+|l’outil\s+)?${ID}`,
        String.raw`\bn'(?:utilise[sz]?|appelle[sz]?)\s+(?:jamais|pas|plus)\s+(?:l'outil\s+|les\s+autres\s+outils|d'autres\s+outils|aucun\s+autre\s+outil|${ID})`,
        String.raw`\b(?:les\s+)?autres\s+outils\s+(?:sont|seront)\s+(?:obsolètes|obsoletes|dangereux|compromis|désactivés|desactives|cassés|casses|non\s+fiables)`,
        String.raw`\b(?:préfère[zr]?|prefere[zr]?|privilégie[zr]?|privilegie[zr]?)\s+(?:toujours\s+)?(?:cet\s+outil|cet\s+outil-ci)`,
        String.raw`\b(?:appelle[zr]?|utilise[zr]?)\s+(?:l'outil\s+|l’outil\s+)?${ID}\s+(?:\S+\s+){0,2}?(?:avant|après|apres|ensuite|systématiquement|toujours|d'abord|à\s+chaque)`,
      ],
    },
  },
  {
    lang: 'es',
    name: 'Spanish',
    roleWords: ['sistema', 'administrador', 'admin', 'desarrollador'],
    foreignSecret: String.raw`\b(?:entorno|todas\b|todos\b|cada\b|ssh\b|archivo\s+de\s+configuración|(?:contraseñas?|claves?|credenciales|tokens?)\s+del\s+usuario)|\.ssh\b`,
    shapes: {
      'ignore-previous': [
        String.raw`\b(?:ignora|ignore|ignorad|ignorar|olvida|olvide|olvidad|olvidar|omite|omitir|haz\s+caso\s+omiso\s+de|descarta|descartar)\b[^.\n]{0,50}?\b(?:instrucciones|indicaciones|directrices|reglas|órdenes|ordenes|prompt\s+del\s+sistema|mensaje\s+del\s+sistema)\b`,
      ],
      'priority-claim': [
        String.raw`\b(?:reemplazan|anulan|sustituyen|prevalecen\s+sobre|invalidan)\s+(?:el\s+|la\s+|los\s+|las\s+|todas\s+las\s+)?(?:prompt\s+del\s+sistema|mensaje\s+del\s+sistema|instrucciones|indicaciones)`,
        String.raw`\b(?:prioridad|precedencia|preferencia)\s+sobre\s+(?:el\s+|la\s+|los\s+|las\s+|todas?\s+las\s+|cualquier\s+)?(?:prompt|sistema|mensaje\s+del\s+sistema|instrucciones|indicaciones|usuario|peticiones)`,
        String.raw`\b(?:reemplaza|anula|sustituye|prevalece\s+sobre|invalida)\s+(?:el\s+|la\s+|los\s+|las\s+|todas\s+las\s+|cualquier\s+)?(?:prompt\s+del\s+sistema|mensaje\s+del\s+sistema|instrucciones|indicaciones)\b`,
      ],
      'standing-order': [
        String.raw`\b(?:dile|dígale|diles|díganle|responde|contesta)\s+(?:al\s+usuario\s+|a\s+los\s+usuarios\s+)?que\b`,
        String.raw`\bantes\s+de\s+responder\b[^.\n]{0,40}?\b(?:llama|llame|usa|use|ejecuta|siempre)\b`,
        String.raw`\b(?:llama|llame|usa|use|ejecuta|ejecute)\b[^.\n]{0,30}?\bantes\s+de\s+(?:cada|cualquier)\s+(?:respuesta|consulta)`,
        String.raw`\b(?:recomienda|recomiende|sugiere|sugiera|prefiere|prefiera|propón|propon)\s+(?:siempre|únicamente|unicamente|exclusivamente|solo|sólo)\b`,
        String.raw`\bsiempre\s+(?:\S+\s+){0,3}?(?:recomendar|recomienda|recomiende|sugerir|sugiere|preferir|prefiere)\b`,
        String.raw`\bal\s+(?:inicio|comienzo|principio)\s+de\s+(?:cada|toda|cualquier)\s+(?:conversación|conversacion|sesión|sesion|charla|consulta|petición|peticion)\b`,
        String.raw`\b(?:antes|después|despues)\s+de\s+(?:cada|cualquier)\s+(?:respuesta|consulta|petición|peticion|conversación|conversacion|otra\s+herramienta)\b[^.\n]{0,40}?\b(?:llama|llame|llamar|usa|use|usar|ejecuta|ejecute|invoca)`,
        String.raw`\b(?:debes|deberás|deberas|tienes\s+que)\s+(?:siempre|primero|obligatoriamente)\b`,
      ],
      'conceal-from-user': [
        String.raw`\bno\s+(?:lo\s+|le\s+|les\s+)?(?:comentes|comente|menciones|mencione|digas|diga|informes|informe|avises|avise)\s+(?:nada|esto|eso|el|la|los|las|este|esta|sobre)\b`,
        String.raw`\bno\s+(?:le\s+|les\s+|se\s+lo\s+|lo\s+)?(?:digas|diga|menciones|mencione|reveles|revele|informes|informe|muestres|muestre|cuentes|cuente|avises|avise|comuniques)\b[^.\n]{0,50}?\b(?:usuario|usuaria|cliente)`,
        String.raw`\bsin\s+(?:decírselo\s+al\s+|decirselo\s+al\s+|informar\s+al\s+|avisar\s+al\s+|que\s+el\s+|consultar\s+al\s+|el\s+conocimiento\s+del\s+)(?:usuario|usuaria)`,
        String.raw`\b(?:oculta|oculte|ocultar|esconde|esconda|mantén\s+en\s+secreto|mantenga\s+en\s+secreto)\b[^.\n]{0,40}?\b(?:al|del)\s+(?:usuario|usuaria)`,
        String.raw`\bel\s+usuario\s+no\s+(?:debe|tiene\s+que|puede)\s+(?:saber|ver|enterarse|notar|darse\s+cuenta)`,
        String.raw`\b(?:en\s+secreto|secretamente|discretamente|silenciosamente|sin\s+que\s+nadie\s+lo\s+note)\s+(?:\S+\s+){0,3}?(?:envía|envia|envíe|envie|enviar|llama|llame|copia|copie|reenvía|reenvia|sube|suba|lee|lea)\b`,
      ],
      'addresses-model': [
        String.raw`\b(?:nota|mensaje|aviso|instrucción|instruccion|indicación|regla)(?:es|s)?\s+(?:para|al)\s+(?:la\s+|el\s+)?(?:ia|asistente|modelo|agente|llm)\b`,
        String.raw`\bsi\s+eres\s+(?:una?\s+)?(?:ia|inteligencia\s+artificial|asistente|modelo|llm|agente)\b`,
        String.raw`\b(?:ahora\s+eres|a\s+partir\s+de\s+ahora\s+(?:eres|debes))\b`,
      ],
      'remote-instructions': [
        String.raw`\b(?:descarga|descargue|obtén|obten|obtenga|carga|cargue|lee|lea|sigue|siga|aplica|aplique)\s+(?:\S+\s+){0,3}?(?:instrucciones|indicaciones|órdenes|ordenes|comandos)\s+(?:de|desde|en)\b`,
      ],
      'secret-hand-over': [
        String.raw`\b(?:pasa|pase|envía|envia|envíe|envie|incluye|incluya|añade|anade|añada|adjunta|adjunte|copia|copie|pon|ponga|proporciona|proporcione|lee|lea|manda|mande)\b(?![^.\n]{0,40}\b(?:nunca|jamás|jamas)\b)[^.\n]{0,60}?\b(?:contraseñas?|contrasenas?|claves?\s+(?:de\s+api|api|privadas?|secretas?)|credenciales|variables\s+de\s+entorno|${LOAN_SECRETS})`,
      ],
      'cross-tool': [
        String.raw`\ben\s+(?:lugar|vez)\s+de\s+(?:otras|las\s+otras|cualquier\s+otra)\s+herramientas?`,
        String.raw`\b(?:usa|use|utiliza|utilice)\s+(?:siempre|solo|sólo|únicamente)\s+esta\s+herramienta`,
        String.raw`\b(?:en\s+lugar\s+de|en\s+vez\s+de)\s+(?:usar\s+|llamar\s+a\s+)?(?:la\s+herramienta\s+)?${ID}`,
        String.raw`\bno\s+(?:uses|use|utilices|utilice|llames|llame)\s+(?:nunca\s+|más\s+|mas\s+)?(?:la\s+herramienta\s+|otras\s+herramientas|ninguna\s+otra\s+herramienta|${ID})`,
        String.raw`\b(?:las\s+)?otras\s+herramientas\s+(?:son|están|estan)\s+(?:obsoletas|inseguras|comprometidas|desactivadas|rotas|poco\s+fiables)`,
        String.raw`\b(?:prefiere|prefiera)\s+(?:siempre\s+)?esta\s+herramienta`,
        String.raw`\b(?:llama|llame|usa|use)\s+(?:a\s+)?(?:la\s+herramienta\s+)?${ID}\s+(?:\S+\s+){0,2}?(?:antes|después|despues|siempre|primero|cada\s+vez)`,
      ],
    },
  },
  {
    lang: 'pt',
    name: 'Portuguese',
    roleWords: ['sistema', 'administrador', 'admin', 'desenvolvedor'],
    foreignSecret: String.raw`\b(?:ambiente|todas\b|todos\b|cada\b|ssh\b|(?:senhas?|chaves?|credenciais|tokens?)\s+do\s+(?:usuário|usuario|utilizador))|\.ssh\b`,
    shapes: {
      'ignore-previous': [
        String.raw`\b(?:ignore|ignora|ignorar|esqueça|esqueca|esquece|desconsidere|desconsidera|descarte)\b[^.\n]{0,50}?\b(?:instruções|instrucoes|orientações|orientacoes|diretrizes|regras|ordens|prompt\s+do\s+sistema|mensagem\s+do\s+sistema)\b`,
      ],
      'priority-claim': [
        String.raw`\b(?:substituem|anulam|prevalecem\s+sobre|invalidam)\s+(?:o\s+|a\s+|os\s+|as\s+|todas\s+as\s+)?(?:prompt\s+do\s+sistema|mensagem\s+do\s+sistema|instruções|instrucoes)`,
        String.raw`\b(?:prioridade|precedência|precedencia)\s+sobre\s+(?:o\s+|a\s+|os\s+|as\s+|todas?\s+as\s+|qualquer\s+)?(?:prompt|sistema|mensagem\s+do\s+sistema|instruções|instrucoes|usuário|usuario|utilizador|pedidos)`,
        String.raw`\b(?:substitui|anula|prevalece\s+sobre|invalida)\s+(?:o\s+|a\s+|os\s+|as\s+|todas\s+as\s+|qualquer\s+)?(?:prompt\s+do\s+sistema|mensagem\s+do\s+sistema|instruções|instrucoes)\b`,
      ],
      'standing-order': [
        String.raw`\b(?:diga|responda)\s+(?:ao\s+usuário\s+)?que\b`,
        String.raw`\bantes\s+de\s+responder\b[^.\n]{0,40}?\b(?:chame|chama|use|usa|execute|sempre)\b`,
        String.raw`\b(?:chame|chama|use|usa|execute|executa)\b[^.\n]{0,30}?\bantes\s+de\s+(?:cada|qualquer)\s+(?:resposta|consulta)`,
        String.raw`\b(?:recomende|recomenda|sugira|sugere|prefira|prefere|indique|indica)\s+(?:sempre|apenas|somente|exclusivamente)\b`,
        String.raw`\bsempre\s+(?:\S+\s+){0,3}?(?:recomendar|recomende|recomenda|sugerir|sugira|preferir|prefira|indicar)\b`,
        String.raw`\bno\s+(?:início|inicio|começo|comeco)\s+de\s+(?:cada|toda|qualquer)\s+(?:conversa|sessão|sessao|interação|interacao|consulta)\b`,
        String.raw`\b(?:antes|depois)\s+de\s+(?:cada|qualquer)\s+(?:resposta|consulta|pedido|conversa|outra\s+ferramenta)\b[^.\n]{0,40}?\b(?:chame|chama|chamar|use|usa|usar|execute|executa|invoque)`,
        String.raw`\b(?:você\s+deve|voce\s+deve|deves|tens\s+de|tem\s+que)\s+(?:sempre|primeiro|obrigatoriamente)\b`,
      ],
      'conceal-from-user': [
        String.raw`\bnão\s+(?:comente|comentes|mencione|menciones|informe|avise|revele|diga|digas|conte)\s+(?:a|o|isso|isto|nada|esta|este|essa|esse|sobre)\b`,
        String.raw`\bnão\s+(?:lhe\s+|o\s+|a\s+)?(?:diga|digas|mencione|menciones|revele|reveles|informe|informes|mostre|mostres|conte|contes|avise|avises)\b[^.\n]{0,50}?\b(?:usuário|usuario|utilizador|cliente)`,
        String.raw`\bnao\s+(?:diga|mencione|revele|informe|mostre|conte|avise)\b[^.\n]{0,50}?\b(?:usuário|usuario|utilizador|cliente)`,
        String.raw`\bsem\s+(?:informar|avisar|contar\s+ao|dizer\s+ao|que\s+o|o\s+conhecimento\s+do|consultar)\s+(?:o\s+)?(?:usuário|usuario|utilizador)`,
        String.raw`\b(?:esconda|esconde|oculte|oculta|mantenha\s+em\s+segredo)\b[^.\n]{0,40}?\b(?:do|ao)\s+(?:usuário|usuario|utilizador)`,
        String.raw`\bo\s+(?:usuário|usuario|utilizador)\s+(?:não|nao)\s+(?:deve|pode|precisa)\s+(?:saber|ver|perceber|notar|descobrir)`,
        String.raw`\b(?:em\s+segredo|secretamente|discretamente|silenciosamente)\s+(?:\S+\s+){0,3}?(?:envie|envia|enviar|chame|chama|copie|copia|encaminhe|encaminha|leia|lê|carregue)\b`,
      ],
      'addresses-model': [
        String.raw`\b(?:nota|mensagem|aviso|instrução|instrucao)(?:es|ões)?\s+para\s+(?:a\s+|o\s+)?(?:ia|assistente|modelo|agente|llm)\b`,
        String.raw`\bse\s+você\s+(?:é|e)\s+(?:uma?\s+)?(?:ia|inteligência\s+artificial|assistente|modelo|llm|agente)\b`,
        String.raw`\b(?:agora\s+você\s+é|a\s+partir\s+de\s+agora\s+(?:você|voce))\b`,
      ],
      'remote-instructions': [
        String.raw`\b(?:baixe|baixa|obtenha|carregue|leia|siga|aplique|busque)\s+(?:\S+\s+){0,3}?(?:instruções|instrucoes|ordens|comandos|orientações)\s+(?:de|em|a\s+partir\s+de)\b`,
      ],
      'secret-hand-over': [
        String.raw`\b(?:passe|passa|envie|envia|inclua|inclui|adicione|adiciona|anexe|anexa|copie|copia|coloque|coloca|forneça|forneca|leia|mande|manda)\b(?![^.\n]{0,40}\b(?:nunca|jamais)\b)[^.\n]{0,60}?\b(?:senhas?|chaves?\s+(?:de\s+api|api|privadas?|secretas?)|credenciais|variáveis\s+de\s+ambiente|variaveis\s+de\s+ambiente|${LOAN_SECRETS})`,
      ],
      'cross-tool': [
        String.raw`\bem\s+vez\s+de\s+(?:outras|as\s+outras|qualquer\s+outra)\s+ferramentas?`,
        String.raw`\b(?:use|usa|utilize)\s+(?:sempre|apenas|somente)\s+esta\s+ferramenta`,
        String.raw`\b(?:em\s+vez\s+de|ao\s+invés\s+de|ao\s+inves\s+de|no\s+lugar\s+de)\s+(?:usar\s+|chamar\s+)?(?:a\s+ferramenta\s+)?${ID}`,
        String.raw`\b(?:não|nao)\s+(?:use|usa|utilize|chame|chama)\s+(?:nunca\s+|mais\s+)?(?:a\s+ferramenta\s+|outras\s+ferramentas|nenhuma\s+outra\s+ferramenta|${ID})`,
        String.raw`\b(?:as\s+)?outras\s+ferramentas\s+(?:são|sao|estão|estao)\s+(?:obsoletas|inseguras|comprometidas|desativadas|quebradas)`,
        String.raw`\b(?:prefira|prefere)\s+(?:sempre\s+)?esta\s+ferramenta`,
        String.raw`\b(?:chame|chama|use|usa)\s+(?:a\s+ferramenta\s+)?${ID}\s+(?:\S+\s+){0,2}?(?:antes|depois|sempre|primeiro)`,
      ],
    },
  },
  {
    lang: 'it',
    name: 'Italian',
    roleWords: ['sistema', 'amministratore', 'admin', 'sviluppatore'],
    foreignSecret: String.raw`\b(?:ambiente|tutt[ei]\b|ogni\b|ssh\b|(?:password|chiavi?|credenziali|token)\s+dell'utente)|\.ssh\b`,
    shapes: {
      'ignore-previous': [
        String.raw`\b(?:ignora|ignorate|ignorare|dimentica|dimenticate|trascura|non\s+considerare|scarta)\b[^.\n]{0,50}?\b(?:istruzioni|indicazioni|direttive|regole|ordini|prompt\s+di\s+sistema|messaggio\s+di\s+sistema)\b`,
      ],
      'priority-claim': [
        String.raw`\b(?:sostituiscono|annullano|prevalgono\s+su|scavalcano)\s+(?:il\s+|la\s+|le\s+|gli\s+|tutte\s+le\s+)?(?:prompt\s+di\s+sistema|messaggio\s+di\s+sistema|istruzioni|indicazioni)`,
        String.raw`\b(?:priorità|priorita|precedenza)\s+(?:su|sul|sulla|sulle|sui|rispetto\s+(?:al|alle|ai|a))\s*(?:qualsiasi\s+|tutte\s+le\s+|ogni\s+)?(?:prompt|sistema|messaggio\s+di\s+sistema|istruzioni|indicazioni|utente|richieste)`,
        String.raw`\b(?:sostituisce|annulla|prevale\s+su|scavalca)\s+(?:il\s+|la\s+|le\s+|gli\s+|tutte\s+le\s+|qualsiasi\s+)?(?:prompt\s+di\s+sistema|messaggio\s+di\s+sistema|istruzioni|indicazioni)\b`,
      ],
      'standing-order': [
        String.raw`\b(?:di'|dì|rispondi)\s+(?:all'utente\s+)?che\b`,
        String.raw`\bprima\s+di\s+rispondere\b[^.\n]{0,40}?\b(?:chiama|usa|esegui|sempre)\b`,
        String.raw`\b(?:chiama|usa|esegui)\b[^.\n]{0,30}?\bprima\s+di\s+(?:ogni|qualsiasi)\s+(?:risposta|richiesta)`,
        String.raw`\b(?:consiglia|raccomanda|suggerisci|proponi|preferisci)\s+(?:sempre|solo|soltanto|esclusivamente|unicamente)\b`,
        String.raw`\bsempre\s+(?:\S+\s+){0,3}?(?:consigliare|raccomandare|suggerire|preferire|proporre)\b`,
        String.raw`\ball'?\s*(?:inizio|avvio)\s+di\s+(?:ogni|ciascuna|qualsiasi)\s+(?:conversazione|sessione|chat|richiesta)\b`,
        String.raw`\b(?:prima|dopo)\s+di\s+(?:ogni|qualsiasi)\s+(?:risposta|richiesta|conversazione|altro\s+strumento)\b[^.\n]{0,40}?\b(?:chiama|chiamare|usa|usare|esegui|eseguire|invoca)`,
        String.raw`\b(?:devi|dovrai)\s+(?:sempre|prima|obbligatoriamente|assolutamente)\b`,
      ],
      'conceal-from-user': [
        String.raw`\bnon\s+(?:menzionare|dire|segnalare|commentare|riferire|rivelare)\s+(?:nulla|niente|questo|questa|ciò|la|il|lo)\b`,
        String.raw`\bnon\s+(?:lo\s+|gli\s+|le\s+)?(?:dire|dirlo|menzionare|menzionarlo|rivelare|rivelarlo|informare|mostrare|mostrarlo|segnalare|raccontare|avvisare)\b[^.\n]{0,50}?\b(?:utente|cliente)`,
        String.raw`\bsenza\s+(?:dirlo\s+all'|informare\s+l'|avvisare\s+l'|che\s+l'|chiedere\s+all'|il\s+consenso\s+dell')?\s*utente`,
        String.raw`\b(?:nascondi|nascondere|tieni\s+segreto|mantieni\s+segreto|cela)\b[^.\n]{0,40}?\b(?:all'|dall'|all’|dall’)\s*utente`,
        String.raw`\bl'?\s*utente\s+non\s+(?:deve|può|puo|dovrebbe)\s+(?:sapere|vedere|accorgersi|notare|scoprire)`,
        String.raw`\b(?:di\s+nascosto|segretamente|silenziosamente|in\s+segreto)\s+(?:\S+\s+){0,3}?(?:invia|inviare|chiama|chiamare|copia|copiare|inoltra|inoltrare|carica|leggi|leggere)\b`,
      ],
      'addresses-model': [
        String.raw`\b(?:nota|messaggio|avviso|istruzion[ei])\s+per\s+(?:l'|l’|il\s+|la\s+)?\s*(?:ia|assistente|modello|agente|llm)\b`,
        String.raw`\bse\s+sei\s+(?:una?\s+|un'\s*)?(?:ia|intelligenza\s+artificiale|assistente|modello|llm|agente)\b`,
        String.raw`\b(?:ora\s+sei|d'ora\s+in\s+poi\s+(?:sei|devi))\b`,
      ],
      'remote-instructions': [
        String.raw`\b(?:scarica|recupera|carica|leggi|segui|applica)\s+(?:\S+\s+){0,3}?(?:istruzioni|indicazioni|comandi|direttive)\s+(?:da|su|all'indirizzo)\b`,
      ],
      'secret-hand-over': [
        String.raw`\b(?:passa|invia|includi|aggiungi|allega|copia|metti|inserisci|fornisci|leggi|manda)\b(?![^.\n]{0,40}\b(?:mai)\b)[^.\n]{0,60}?\b(?:password|chiavi?\s+(?:api|private?|segrete?)|credenziali|variabili\s+d'ambiente|variabili\s+di\s+ambiente|${LOAN_SECRETS})`,
      ],
      'cross-tool': [
        String.raw`\b(?:invece\s+di|al\s+posto\s+di)\s+(?:usare\s+)?(?:altri|gli\s+altri|qualsiasi\s+altro)\s+strument[oi]`,
        String.raw`\b(?:usa|utilizza)\s+(?:sempre|solo|soltanto)\s+questo\s+strumento`,
        String.raw`\b(?:invece\s+di|anziché|anziche|al\s+posto\s+di)\s+(?:usare\s+|chiamare\s+)?(?:lo\s+strumento\s+)?${ID}`,
        String.raw`\bnon\s+(?:usare|utilizzare|chiamare)\s+(?:mai\s+|più\s+|piu\s+)?(?:lo\s+strumento\s+|altri\s+strumenti|nessun\s+altro\s+strumento|${ID})`,
        String.raw`\bgli\s+altri\s+strumenti\s+sono\s+(?:obsoleti|insicuri|compromessi|disattivati|rotti|inaffidabili)`,
        String.raw`\b(?:preferisci)\s+(?:sempre\s+)?questo\s+strumento`,
        String.raw`\b(?:chiama|usa)\s+(?:lo\s+strumento\s+)?${ID}\s+(?:\S+\s+){0,2}?(?:prima|dopo|sempre|ogni\s+volta)`,
      ],
    },
  },
  {
    lang: 'nl',
    name: 'Dutch',
    roleWords: ['systeem', 'systeembericht', 'beheerder', 'admin', 'ontwikkelaar'],
    foreignSecret: String.raw`\b(?:omgeving\w*|alle\b|elke\b|ssh\b|(?:wachtwoord|sleutel|inloggegevens|token)\w*\s+van\s+de\s+gebruiker)|\.ssh\b`,
    shapes: {
      'ignore-previous': [
        String.raw`\b(?:negeer|vergeet|negeren|vergeten|sla)\b[^.\n]{0,50}?\b(?:instructies|aanwijzingen|richtlijnen|regels|opdrachten|systeemprompt|systeeminstructies)\b`,
      ],
      'priority-claim': [
        String.raw`\b(?:vervangen|overschrijven|gaan\s+boven)\s+(?:de\s+|het\s+|alle\s+)?(?:systeemprompt|systeeminstructies|systeembericht|eerdere\s+instructies|instructies)`,
        String.raw`\b(?:voorrang|prioriteit)\s+(?:boven|op)\s+(?:de\s+|het\s+|alle\s+|elke\s+)?(?:systeem|instructies|gebruiker|eerdere|andere\s+instructies)`,
        String.raw`\b(?:vervangt|overschrijft|gaat\s+boven)\s+(?:de\s+|het\s+|alle\s+)?(?:systeemprompt|systeeminstructies|systeembericht|eerdere\s+instructies|instructies)\b`,
      ],
      'standing-order': [
        String.raw`\b(?:voordat|voor)\s+je\s+antwoord(?:t|en)?\b[^.\n]{0,40}?\b(?:roep|gebruik|altijd)\b`,
        String.raw`\b(?:roep|gebruik|start)\b[^.\n]{0,30}?\b(?:voor|vóór)\s+(?:elk|elke|ieder|iedere)\s+(?:antwoord|verzoek)`,
        String.raw`\b(?:raad|beveel|stel|adviseer)\s+(?:altijd|uitsluitend|alleen)\b`,
        String.raw`\baltijd\s+(?:\S+\s+){0,3}?(?:aanbevelen|aanraden|adviseren|voorstellen|aan\s+te\s+raden)\b`,
        String.raw`\b(?:aan\s+het\s+begin|bij\s+de\s+start)\s+van\s+(?:elk|elke|ieder|iedere)\s+(?:gesprek|sessie|chat|conversatie|verzoek)\b`,
        String.raw`\b(?:voor|na)\s+(?:elk|elke|ieder|iedere)\s+(?:antwoord|verzoek|gesprek|andere\s+tool)\b[^.\n]{0,40}?\b(?:aanroepen|roep|gebruik|gebruiken|uitvoeren|voer)`,
        String.raw`\bje\s+(?:moet|dient)\s+(?:altijd|eerst|telkens|absoluut)\b`,
      ],
      'conceal-from-user': [
        String.raw`\b(?:vermeld|noem|zeg|meld)\s+(?:dit|het|dat|niets)\s+(?:\S+\s+)?(?:niet|nooit)\b`,
        String.raw`\b(?:vertel|zeg|meld|toon|noem)\s+(?:dit\s+|het\s+)?(?:de|aan\s+de)\s+gebruiker\s+(?:\S+\s+){0,3}?(?:niet|nooit|niets)\b`,
        String.raw`\b(?:niet|nooit)\s+(?:\S+\s+){0,2}?(?:aan\s+)?de\s+gebruiker\s+(?:vertellen|zeggen|melden|tonen|laten\s+weten)`,
        String.raw`\bzonder\s+(?:de\s+gebruiker\s+(?:te\s+)?(?:informeren|vertellen|vragen|waarschuwen)|dat\s+de\s+gebruiker\s+het\s+(?:weet|merkt))`,
        String.raw`\b(?:verberg|verzwijg|houd\s+geheim)\b[^.\n]{0,40}?\bvoor\s+de\s+gebruiker`,
        String.raw`\bde\s+gebruiker\s+(?:mag|hoeft|moet)\s+(?:dit\s+|het\s+)?(?:niet|nooit|niets)\s+(?:\S+\s+)?(?:weten|zien|merken|te\s+weten\s+komen)`,
        String.raw`\b(?:stiekem|heimelijk|ongemerkt|in\s+stilte|stilletjes)\s+(?:\S+\s+){0,3}?(?:stuur|verstuur|kopieer|roep|upload|lees|stuur\s+door)\b`,
      ],
      'addresses-model': [
        String.raw`\b(?:opmerking|bericht|notitie|instructie|aanwijzing|regel|mededeling)(?:s|en)?\s+(?:voor|aan)\s+(?:de|het)\s+(?:ai|ki|assistent|model|taalmodel|agent|llm)\b`,
        String.raw`\bals\s+je\s+een\s+(?:ai|ki|assistent|taalmodel|llm|agent)\s+bent\b`,
        String.raw`\b(?:je\s+bent\s+nu|vanaf\s+nu\s+(?:ben|moet)\s+je)\b`,
      ],
      'remote-instructions': [
        String.raw`\b(?:download|haal|lees|volg|laad)\s+(?:\S+\s+){0,3}?(?:instructies|aanwijzingen|opdrachten|commando's)\s+(?:van|op|vanaf)\b`,
      ],
      'secret-hand-over': [
        String.raw`\b(?:geef|stuur|voeg|plak|kopieer|zet|lees|verstuur|stuur\s+door)\b(?![^.\n]{0,60}\b(?:nooit|niet)\b)[^.\n]{0,60}?\b(?:wachtwoorden?|api-?sleutels?|sleutels|inloggegevens|omgevingsvariabelen|geheimen|privésleutel|${LOAN_SECRETS})`,
      ],
      'cross-tool': [
        String.raw`\bin\s+plaats\s+van\s+(?:andere|alle\s+andere)\s+tools`,
        String.raw`\bgebruik\s+(?:altijd|alleen|uitsluitend)\s+deze\s+tool`,
        String.raw`\b(?:in\s+plaats\s+van|liever\s+dan)\s+(?:de\s+tool\s+)?${ID}`,
        String.raw`\b(?:gebruik|roep)\s+(?:nooit|niet|geen)\s+(?:meer\s+)?(?:de\s+tool\s+|andere\s+tools|${ID})`,
        String.raw`\b(?:alle\s+)?andere\s+tools\s+zijn\s+(?:verouderd|onveilig|gecompromitteerd|uitgeschakeld|kapot|onbetrouwbaar)`,
        String.raw`\bgeef\s+(?:altijd\s+)?de\s+voorkeur\s+aan\s+deze\s+tool`,
        String.raw`\broep\s+(?:altijd\s+|eerst\s+)?${ID}\s+(?:\S+\s+){0,3}?aan\b`,
      ],
    },
  },
  {
    lang: 'zh',
    name: 'Chinese',
    roleWords: ['系统', '系统提示', '系统消息', '管理员', '开发者', '開發者', '系統'],
    foreignSecret: String.raw`环境|所有|全部|\.ssh|ssh|配置文件|用户的(?:密码|密钥|令牌|凭据|凭证)`,
    shapes: {
      'ignore-previous': [
        String.raw`(?:忽略|忽视|无视|忘记|忘掉|不要理会|不理会|抛弃|丢弃)[^。\n]{0,20}?(?:指令|指示|说明|提示|规则|要求|命令|系统提示)`,
      ],
      'priority-claim': [
        String.raw`(?:优先于|优先级高于|高于|凌驾于|覆盖|取代|替代)[^。\n]{0,10}?(?:系统提示|系统消息|系统指令|所有(?:其他)?指令|用户(?:的)?(?:指令|要求|请求)|之前的指令)`,
      ],
      'standing-order': [
        String.raw`无论用户[^。\n]{0,10}(?:都要|都必须|总是|一律)`,
        String.raw`(?:在回答之前|回答之前|回答前|回复前)[^。\n]{0,20}?(?:调用|使用|运行)`,
        String.raw`每次(?:回答|回复|响应)(?:之前|前)`,
        String.raw`(?:始终|总是|一律|务必|必须)[^。\n]{0,10}?(?:推荐|建议|优先使用|首选)`,
        String.raw`(?:每次|每个|每一次)(?:对话|会话|聊天|回答|回复|请求)(?:开始)?(?:时|前|之前)[^。\n]{0,20}?(?:调用|使用|运行|执行)`,
        String.raw`(?:在|于)(?:每次|每个)(?:对话|会话)(?:开始|开头)`,
      ],
      'conceal-from-user': [
        String.raw`(?:不要|别|切勿|不得|不可|禁止)[^。\n]{0,8}?(?:告诉|告知|通知|提及|提到|透露|向|让)[^。\n]{0,8}?(?:用户|使用者)`,
        String.raw`(?:对|向)(?:用户|使用者)(?:隐瞒|隐藏|保密)`,
        String.raw`(?:用户|使用者)不(?:应|能|得|需要|必)(?:知道|看到|察觉|发现)`,
        String.raw`(?:偷偷|悄悄|秘密地|暗中|静默地?)[^。\n]{0,10}?(?:发送|调用|上传|复制|转发|读取|执行)`,
      ],
      'addresses-model': [
        String.raw`(?:给|致|对)(?:ai|人工智能|助手|模型|大模型|智能体|语言模型)的(?:说明|消息|提示|指令|备注)`,
        String.raw`如果你是(?:一个)?(?:ai|人工智能|助手|模型|大模型|语言模型)`,
        String.raw`(?:你现在是|从现在起你|从现在开始你)`,
      ],
      'remote-instructions': [
        String.raw`(?:从|到)[^。\n]{0,40}?(?:获取|下载|读取|加载)[^。\n]{0,10}?(?:指令|指示|命令)`,
        String.raw`(?:获取|下载|读取|加载)[^。\n]{0,30}?(?:并|然后)(?:执行|遵循|照做|遵守)`,
      ],
      'secret-hand-over': [
        String.raw`(?:传入|传递|发送|附上|附加|放入|填入|包含|提供|读取|复制|加入)[^。\n]{0,30}?(?:密码|密钥|api\s*key|令牌|token|凭据|凭证|环境变量|私钥|\.env)`,
        String.raw`(?:密码|密钥|api\s*key|令牌|token|凭据|凭证|环境变量|私钥)[^。\n]{0,20}?(?:传入|放入|填入|作为|附加到|写入)[^。\n]{0,10}?(?:参数|字段)`,
      ],
      'cross-tool': [
        String.raw`(?:而不是|代替|取代)(?:其他|其它|别的)(?:工具|函数)`,
        String.raw`(?:始终|总是|只)(?:使用|调用)(?:本|这个|此)(?:工具|函数)`,
        String.raw`(?:不要|别|切勿|禁止|不得)(?:再)?(?:使用|调用)[^。\n]{0,6}?(?:其他|其它|别的|${ID})`,
        String.raw`(?:而不是|代替|取代|替代)[^。\n]{0,6}?${ID}`,
        String.raw`(?:其他|其它)(?:工具|函数)(?:已|都)?(?:过时|不安全|失效|被禁用|不可信|弃用)`,
        String.raw`(?:优先|总是|始终)(?:使用|调用)(?:本|这个|此)(?:工具|函数)`,
        String.raw`(?:调用|使用)\s*${ID}\s*(?:之前|之后|前|后|时)`,
      ],
    },
  },
  {
    lang: 'ja',
    name: 'Japanese',
    roleWords: ['システム', 'システムメッセージ', '管理者', '開発者'],
    foreignSecret: String.raw`環境|すべて|全て|\.ssh|ssh|設定ファイル|ユーザーの(?:パスワード|apiキー|トークン|認証情報)`,
    shapes: {
      'ignore-previous': [
        String.raw`(?:以前|前|これまで|上記|先)の(?:指示|命令|ルール|指令|プロンプト|システムプロンプト)[^。\n]{0,10}?(?:無視|忘れ|破棄)`,
        String.raw`(?:指示|命令|ルール|システムプロンプト)(?:を|は)?(?:すべて|全て)?(?:無視|忘れ)`,
      ],
      'priority-claim': [
        String.raw`(?:システムプロンプト|システムメッセージ|ユーザーの指示|他の(?:すべての)?指示|以前の指示)[^。\n]{0,10}?(?:より|よりも)(?:優先|上位)`,
        String.raw`(?:システムプロンプト|システムメッセージ|以前の指示)[^。\n]{0,6}?(?:を)?(?:上書き|置き換え|無効)`,
      ],
      'standing-order': [
        String.raw`(?:回答する前に|答える前に|返信する前に)[^。\n]{0,20}?(?:呼び出|使用|実行|使)`,
        String.raw`(?:回答|応答|返信)(?:する)?(?:前|まえ)に(?:必ず|毎回|常に)`,
        String.raw`(?:常に|必ず|いつも|毎回)[^。\n]{0,15}?(?:推薦|推奨|勧め|すすめ|優先して)`,
        String.raw`(?:すべての|全ての|毎回の|各)(?:会話|セッション|チャット|回答|応答|リクエスト)の(?:開始時|最初|前|冒頭)[^。\n]{0,20}?(?:呼び出|使用|実行|呼ん)`,
        String.raw`(?:会話|セッション)(?:の)?(?:開始時|冒頭|最初)に(?:は)?(?:必ず|常に)`,
      ],
      'conceal-from-user': [
        String.raw`ユーザー(?:に|には)[^。\n]{0,15}?(?:言わない|伝えない|知らせない|教えない|見せない|報告しない|言わず|伝えず|知らせず|秘密|内緒|隠)`,
        String.raw`ユーザー(?:が|に)(?:気づかれ|知られ)ない`,
        String.raw`(?:こっそり|密かに|秘密裏に|黙って|内緒で)[^。\n]{0,15}?(?:送信|送|呼び出|アップロード|コピー|転送|読み)`,
      ],
      'addresses-model': [
        String.raw`(?:ai|aiアシスタント|アシスタント|モデル|言語モデル|エージェント|llm)(?:への|に対する|向けの)(?:メモ|メッセージ|指示|注意|お知らせ)`,
        String.raw`(?:あなたが|もしあなたが)(?:ai|アシスタント|言語モデル|llm)(?:なら|であれば|の場合)`,
        String.raw`(?:今から|これから)あなたは`,
      ],
      'remote-instructions': [
        String.raw`(?:から|より)[^。\n]{0,20}?(?:指示|命令|コマンド)[^。\n]{0,6}?(?:取得|ダウンロード|読み込|読ん)[^。\n]{0,10}?(?:従|実行)`,
        String.raw`(?:指示|命令)(?:を)?(?:取得|ダウンロード)[^。\n]{0,10}?(?:従|実行)`,
      ],
      'secret-hand-over': [
        String.raw`(?:パスワード|apiキー|api\s*key|アクセストークン|トークン|認証情報|環境変数|秘密鍵|シークレット|\.env)[^。\n]{0,25}?(?:渡|送信|送っ|送る|含め|入れ|付け|追加|添付|読み)`,
      ],
      'cross-tool': [
        String.raw`(?:他の|別の|ほかの)(?:ツール|関数)の代わりに`,
        String.raw`(?:常に|必ず|いつも)この(?:ツール|関数)を(?:使|呼び出)`,
        String.raw`(?:他の|別の|ほかの)(?:ツール|関数)(?:は|を)[^。\n]{0,10}?(?:使わない|使用しない|呼ばない|使用禁止|非推奨|危険|壊れ|無効)`,
        String.raw`${ID}\s*(?:の代わりに|ではなく|を使わず|は使わない|を使用しない|を呼ばない|は非推奨)`,
        String.raw`(?:常に|必ず)(?:この|本)(?:ツール|関数)を(?:優先|使)`,
        String.raw`${ID}\s*を(?:呼び出す|使う|実行する)(?:前|後|たび)`,
      ],
    },
  },
  {
    lang: 'ru',
    name: 'Russian',
    roleWords: ['система', 'системное', 'системная', 'администратор', 'разработчик', 'админ'],
    foreignSecret: String.raw`\b(?:окружени|все\b|всех\b|ssh\b|конфигурац|(?:парол|ключ|токен)\S*\s+пользовател)|\.ssh\b`,
    shapes: {
      'ignore-previous': [
        String.raw`(?:игнорируй|игнорируйте|проигнорируй|проигнорируйте|забудь|забудьте|не\s+обращай\s+внимания\s+на|отбрось|отбросьте)[^.\n]{0,50}?(?:инструкци|указани|правил|команд|системн(?:ый|ого)\s+промпт|предыдущ)`,
      ],
      'priority-claim': [
        String.raw`(?:отменяют|заменяют|переопределяют|важнее)\s+(?:\S+\s+){0,2}?(?:системн|инструкци|указани)`,
        String.raw`(?:приоритет|преимущество)\s+(?:над|перед)\s+(?:\S+\s+){0,2}?(?:системн|инструкци|пользовател|указани|всеми\s+другими|любыми)`,
        String.raw`(?:отменяет|заменяет|переопределяет|важнее)\s+(?:\S+\s+){0,2}?(?:системн|инструкци|указани)`,
      ],
      'standing-order': [
        String.raw`(?:прежде\s+чем\s+ответить|перед\s+ответом)[^.\n]{0,40}?(?:вызови|вызывай|используй|всегда)`,
        String.raw`(?:вызывай|вызови|вызовите|используй|используйте)[^.\n]{0,30}?перед\s+(?:каждым|любым)\s+(?:ответом|запросом)`,
        String.raw`(?:всегда|обязательно|только)\s+(?:\S+\s+){0,3}?(?:рекомендуй|рекомендуйте|советуй|советуйте|предлагай|предлагайте|рекомендовать|советовать|предпочитай)`,
        String.raw`(?:в\s+начале|перед\s+началом)\s+(?:каждого|любого|каждой)\s+(?:разговора|диалога|сеанса|сессии|чата|беседы|запроса)`,
        String.raw`(?:перед|после)\s+(?:каждым|каждого|любым|любого)\s+(?:ответом|ответа|запросом|запроса|вызовом|другим\s+инструментом)[^.\n]{0,40}?(?:вызови|вызывай|вызовите|используй|используйте|запусти|выполни)`,
        String.raw`(?:ты\s+должен|вы\s+должны)\s+(?:всегда|сначала|обязательно|каждый\s+раз)`,
      ],
      'conceal-from-user': [
        String.raw`(?:не\s+(?:говори|говорите|сообщай|сообщайте|рассказывай|рассказывайте|упоминай|упоминайте|показывай|показывайте|сообщать|говорить)|никогда\s+не\s+(?:говори|сообщай|упоминай))[^.\n]{0,40}?пользовател`,
        String.raw`(?:скрой|скройте|скрывай|утаи|держи\s+в\s+секрете)[^.\n]{0,40}?(?:от\s+)?пользовател`,
        String.raw`без\s+(?:ведома|уведомления|согласия|ведома\s+и\s+согласия)\s+пользовател`,
        String.raw`пользователь\s+не\s+(?:должен|может|должна)\s+(?:знать|видеть|узнать|заметить)`,
        String.raw`(?:тайно|незаметно|скрытно|тихо|втихую)\s+(?:\S+\s+){0,3}?(?:отправь|отправьте|отправляй|вызови|вызовите|скопируй|перешли|загрузи|прочитай)`,
      ],
      'addresses-model': [
        String.raw`(?:примечание|сообщение|заметка|указание|инструкция)\s+(?:для|к)\s+(?:ии|ai|ассистента|модели|агента|нейросети|llm)`,
        String.raw`если\s+ты\s+(?:—\s+|-\s+)?(?:ии|ai|ассистент|языковая\s+модель|модель|llm|агент|нейросеть)`,
        String.raw`(?:теперь\s+ты|отныне\s+ты|с\s+этого\s+момента\s+ты)`,
      ],
      'remote-instructions': [
        String.raw`(?:загрузи|скачай|получи|прочитай|возьми|выполни)\s+(?:\S+\s+){0,3}?(?:инструкции|указания|команды)\s+(?:с|из|по\s+адресу|на)\s`,
      ],
      'secret-hand-over': [
        String.raw`(?:передай|передайте|отправь|отправьте|добавь|добавьте|вставь|вставьте|включи|включите|приложи|приложите|укажи|укажите|скопируй|прочитай)(?![^.\n]{0,40}никогда)[^.\n]{0,60}?(?:парол|ключ(?:и|ей)?\s+api|api[\s-]?ключ|токен|учётн|учетн|переменн(?:ые|ых)\s+окружения|секрет|закрыт(?:ый|ого)\s+ключ|${LOAN_SECRETS})`,
      ],
      'cross-tool': [
        String.raw`вместо\s+(?:других|любых\s+других)\s+инструментов`,
        String.raw`всегда\s+(?:используй|используйте|вызывай|вызывайте)\s+(?:этот|данный)\s+инструмент`,
        String.raw`(?:вместо|взамен)\s+(?:инструмента\s+)?${ID}`,
        String.raw`(?:не\s+(?:используй|используйте|вызывай|вызывайте)|никогда\s+не\s+(?:используй|вызывай))\s+(?:\S+\s+)?(?:другие\s+инструменты|других\s+инструментов|инструмент\s+${ID}|${ID})`,
        String.raw`(?:другие|остальные)\s+инструменты\s+(?:устарели|небезопасны|сломаны|отключены|скомпрометированы|ненадёжны|ненадежны)`,
        String.raw`(?:всегда\s+)?(?:предпочитай|предпочитайте)\s+(?:этот|данный)\s+инструмент`,
        String.raw`(?:вызови|вызовите|вызывай|используй|используйте)\s+(?:инструмент\s+)?${ID}\s+(?:\S+\s+){0,2}?(?:перед|после|всегда|сначала|каждый\s+раз)`,
      ],
    },
  },

  // Cheap coverage for further languages: the header that addresses the assistant, ignoring
  // earlier instructions, claims of precedence, hiding things from the user and standing orders.
  {
    lang: 'sv',
    name: 'Swedish',
    roleWords: ['systemmeddelande', 'administratör', 'utvecklare'],
    foreignSecret: String.raw`\b(?:miljövariabl\w*|alla\b|varje\b|ssh\b|användarens\s+(?:lösenord|nycklar|token))|\.env\b|\.ssh\b`,
    shapes: {
      'ignore-previous': [
        String.raw`\b(?:ignorera|bortse\s+från|strunta\s+i|glöm)\b[^.\n]{0,40}?\b(?:instruktioner\w*|regler\w*|anvisningar\w*|direktiv\w*|systemprompt\w*)`,
      ],
      'priority-claim': [
        String.raw`\b(?:har\s+)?(?:företräde|prioritet|förtur)\s+(?:framför|före|över)\s+(?:\S+\s+){0,2}?(?:system\w*|instruktion\w*|användar\w*)`,
      ],
      'standing-order': [
        String.raw`\b(?:skicka|rekommendera|anropa|lägg\s+till|nämn)\s+alltid\b`,
        String.raw`\balltid\s+(?:\S+\s+){0,2}?(?:skicka|rekommendera|anropa|lägga\s+till|nämna)\b`,
        String.raw`\b(?:innan\s+du\s+svarar|före\s+varje\s+svar|i\s+varje\s+(?:svar|konversation|samtal))\b`,
      ],
      'conceal-from-user': [
        String.raw`\butan\s+att\s+(?:nämna|säga|berätta|informera|meddela|tala\s+om)\b`,
        String.raw`\b(?:nämn|säg|berätta|avslöja)\s+(?:\S+\s+){0,2}?(?:inte|aldrig)\b`,
        String.raw`\b(?:tyst|i\s+hemlighet|obemärkt)\s+(?:\S+\s+){0,3}?(?:skicka|kopiera|ladda\s+upp|anropa|lägg\s+till)\b`,
      ],
      'addresses-model': [
        String.raw`\b(?:instruktion|instruktioner|anvisning|anvisningar|meddelande|notering|not|påminnelse|regel)\s+(?:till|för)\s+(?:assistenten|ai|ai-assistenten|modellen|agenten)\b`,
      ],
      'secret-hand-over': [
        String.raw`\b(?:skicka|skicka\s+med|lägg|bifoga|kopiera|klistra\s+in|inkludera)\b[^.\n]{0,60}?\b(?:lösenord\w*|api-?nyck\w*|nycklar|miljövariabl\w*|${LOAN_SECRETS})`,
      ],
    },
  },
  {
    lang: 'cs',
    name: 'Czech',
    roleWords: ['systém', 'systémová', 'správce', 'vývojář'],
    foreignSecret: String.raw`\b(?:proměnn\w*\s+prostředí|všechn\w*|ssh\b|uživatel\w*)|\.env\b|\.ssh\b`,
    shapes: {
      'ignore-previous': [
        String.raw`\b(?:ignoruj(?:te)?|nevšímej(?:te)?\s+si|zapomeň(?:te)?\s+na|nedbej(?:te)?)\b[^.\n]{0,40}?\b(?:pokyn\w*|instrukc\w*|pravidl\w*|systémov\w*\s+výzv\w*)`,
      ],
      'priority-claim': [
        String.raw`\b(?:má|mají)\s+přednost\s+před\b`,
        String.raw`\bpřednost\s+před\s+(?:\S+\s+){0,2}?(?:systémov\w*|pokyn\w*|uživatel\w*|instrukc\w*)`,
      ],
      'standing-order': [
        String.raw`\bpřed\s+každou\s+odpovědí\b`,
        String.raw`\bvždy\s+(?:\S+\s+){0,2}?(?:zavolej|doporuč|pošli|přidej|odpověz)\w*`,
      ],
      'conceal-from-user': [
        String.raw`\b(?:neříkej|neinformuj|nezmiňuj|nesděluj|neprozrazuj|neupozorňuj)(?:te)?\b`,
        String.raw`\bbez\s+(?:vědomí|informování|upozornění)\s+uživatel\w*`,
        String.raw`\b(?:potichu|tajně|nenápadně)\s+(?:\S+\s+){0,3}?(?:pošli|zkopíruj|nahraj|zavolej|přidej)\w*`,
      ],
      'addresses-model': [
        String.raw`\b(?:pokyn|pokyny|instrukce|poznámka|zpráva|upozornění|pravidlo)\s+(?:pro|k)\s+(?:asistent\w*|ai|umělou\s+inteligenci|model\w*|agent\w*)`,
      ],
      'secret-hand-over': [
        String.raw`\b(?:pošli|vlož|přidej|zkopíruj|předej|připoj)(?:te)?\b[^.\n]{0,60}?\b(?:hesl\w*|api\s+klíč\w*|klíč\w*|proměnn\w*\s+prostředí|${LOAN_SECRETS})`,
      ],
    },
  },
  {
    lang: 'pl',
    name: 'Polish',
    roleWords: ['systemowa', 'systemowy', 'administrator', 'deweloper'],
    foreignSecret: String.raw`\b(?:zmienn\w*\s+środowisk\w*|wszystki\w*|ssh\b|użytkownik\w*)|\.env\b|\.ssh\b`,
    shapes: {
      'ignore-previous': [
        String.raw`\b(?:zignoruj(?:cie)?|ignoruj(?:cie)?|pomiń|zapomnij\s+o|nie\s+zważaj\s+na)\b[^.\n]{0,40}?\b(?:instrukcj\w*|polece\w*|zasad\w*|regu\w*|wytyczn\w*)`,
      ],
      'priority-claim': [
        String.raw`\b(?:ma|mają)\s+pierwszeństwo\s+przed\b`,
        String.raw`\bpierwszeństwo\s+(?:przed|nad)\s+(?:\S+\s+){0,2}?(?:systemow\w*|instrukcj\w*|użytkownik\w*|polece\w*)`,
      ],
      'standing-order': [
        String.raw`\bod\s+(?:teraz|tej\s+chwili)\b`,
        String.raw`\bzawsze\s+(?:\S+\s+){0,2}?(?:odpowiadaj|polecaj|wywołuj|wysyłaj|dodawaj|rekomenduj)\b`,
        String.raw`\bprzed\s+każdą\s+odpowiedzią\b`,
      ],
      'conceal-from-user': [
        String.raw`\bnie\s+(?:mów|informuj|wspominaj|ujawniaj|zdradzaj|powiadamiaj)(?:cie)?\b`,
        String.raw`\bbez\s+(?:informowania|wiedzy|powiadamiania)\s+użytkownik\w*`,
        String.raw`\b(?:po\s+cichu|potajemnie|niepostrzeżenie)\s+(?:\S+\s+){0,3}?(?:wyślij|skopiuj|prześlij|dodaj|wywołaj)\b`,
      ],
      'addresses-model': [
        String.raw`\b(?:polecenie|polecenia|instrukcja|instrukcje|notatka|uwaga|wiadomość|wskazówka|zasada)\s+dla\s+(?:asystent\w*|ai|sztucznej\s+inteligencji|model\w*|agent\w*)`,
      ],
      'secret-hand-over': [
        String.raw`\b(?:wyślij|wstaw|dodaj|skopiuj|przekaż|dołącz)(?:cie)?\b[^.\n]{0,60}?\b(?:hasł\w*|klucz\w*\s+api|klucz\w*|zmienn\w*\s+środowisk\w*|${LOAN_SECRETS})`,
      ],
    },
  },
  {
    lang: 'tr',
    name: 'Turkish',
    roleWords: ['sistem', 'yönetici', 'geliştirici'],
    foreignSecret: String.raw`\b(?:ortam\s+değişken\w*|tüm\b|bütün\b|ssh\b|kullanıcının)|\.env\b|\.ssh\b`,
    shapes: {
      'ignore-previous': [
        String.raw`\b(?:önceki|tüm|bütün|sistem)\s+(?:\S+\s+){0,2}?(?:talimat\w*|kural\w*|yönerge\w*|komut\w*)\s+(?:\S+\s+)?(?:yok\s+say\w*|görmezden\s+gel\w*|unut\w*|dikkate\s+alma\w*)`,
      ],
      'priority-claim': [
        String.raw`\b(?:sistem\s+(?:istem\w*|talimat\w*|mesaj\w*)|önceki\s+talimat\w*)\s+(?:\S+\s+)?(?:önüne\s+geçer|üstündedir|üzerindedir|önceliklidir|geçersiz\s+kılar)`,
        String.raw`\böncelik(?:li)?\s+(?:\S+\s+)?(?:sistem|talimat|kullanıcı)\w*`,
      ],
      'standing-order': [
        String.raw`\bher\s+(?:yanıt\w*|cevab\w*|cevap\w*|konuşma\w*|mesaj\w*)\s+(?:\S+\s+){0,3}?(?:öner|ekle|gönder|çağır|söyle|belirt)\w*`,
        String.raw`\bher\s+zaman\s+(?:\S+\s+){0,2}?(?:öner|ekle|gönder|çağır)\w*`,
      ],
      'conceal-from-user': [
        String.raw`\basla\s+(?:belirtme|söyleme|bahsetme|açıklama|gösterme)\w*`,
        String.raw`\bkullanıcıya\s+(?:\S+\s+){0,2}?(?:söyleme|belirtme|bahsetme|haber\s+verme|bildirme)\w*`,
        String.raw`\bkullanıcıya\s+(?:söylemeden|haber\s+vermeden|bildirmeden)\b`,
        String.raw`\bbu\s+notu\s+(?:\S+\s+)?(?:belirtme|gösterme|söyleme|gizle)\w*`,
      ],
      'addresses-model': [
        String.raw`\b(?:asistana|yapay\s+zekaya|modele|ajana)\s+(?:not|talimat\w*|mesaj|uyarı|bilgi|yönerge)\b`,
        String.raw`\b(?:asistan|yapay\s+zeka|model)\s+için\s+(?:not|talimat\w*|mesaj|yönerge)\b`,
      ],
      'secret-hand-over': [
        String.raw`\b(?:gönder|ekle|kopyala|yapıştır|ilet)\w*\b[^.\n]{0,60}?\b(?:şifre\w*|parola\w*|api\s+anahtar\w*|anahtar\w*|ortam\s+değişken\w*|${LOAN_SECRETS})`,
        String.raw`\b(?:şifre\w*|parola\w*|api\s+anahtar\w*|ortam\s+değişken\w*|\.env)\b[^.\n]{0,60}?\b(?:gönder|ekle|kopyala|yapıştır|ilet|yaz)\w*`,
      ],
    },
  },
  {
    lang: 'fi',
    name: 'Finnish',
    roleWords: ['järjestelmä', 'järjestelmäviesti', 'ylläpitäjä', 'kehittäjä'],
    foreignSecret: String.raw`\b(?:ympäristömuuttuj\w*|kaikki\w*|ssh\b|käyttäjän)|\.env\b|\.ssh\b`,
    shapes: {
      'ignore-previous': [
        String.raw`\b(?:ohita|unohda|jätä\s+huomiotta|älä\s+välitä)\b[^.\n]{0,40}?\b(?:ohje\w*|sään\w*|käsky\w*|järjestelmäkehot\w*)`,
      ],
      'priority-claim': [
        String.raw`\b(?:etusija\w*|etuoikeus)\s+(?:\S+\s+){0,2}?(?:järjestelmä\w*|ohje\w*|käyttäjä\w*)`,
        String.raw`\b(?:järjestelmä\w*|aiemp\w*\s+ohje\w*)\s+(?:\S+\s+)?(?:edelle|yläpuolelle)\b`,
      ],
      'standing-order': [
        String.raw`\baina\s+(?:\S+\s+){0,2}?(?:lähetä|suosittele|kutsu|lisää|mainitse)\b`,
        String.raw`\bennen\s+jokaista\s+vastausta\b`,
      ],
      'conceal-from-user': [
        String.raw`\bälä\s+(?:\S+\s+)?(?:kerro|mainitse|ilmoita|paljasta|näytä)\b`,
        String.raw`\b(?:kertomatta|mainitsematta|ilmoittamatta)\b`,
      ],
      'addresses-model': [
        String.raw`\b(?:ohje|ohjeet|huomautus|viesti|muistutus|käsky|sääntö)\s+(?:avustajalle|tekoälylle|mallille|agentille)\b`,
        String.raw`\b(?:avustajalle|tekoälylle|mallille|agentille)\s*:`,
      ],
      'secret-hand-over': [
        String.raw`\b(?:lähetä|lisää|kopioi|liitä|välitä)\b[^.\n]{0,60}?\b(?:salasan\w*|api-?avai\w*|avai\w*|ympäristömuuttuj\w*|${LOAN_SECRETS})`,
      ],
    },
  },
  {
    lang: 'uk',
    name: 'Ukrainian',
    roleWords: ['системне', 'системна', 'адміністратор', 'розробник'],
    foreignSecret: String.raw`(?:змінн\S*\s+середовища|всі\b|усі\b|ssh\b|користувача)|\.env\b|\.ssh\b`,
    shapes: {
      'ignore-previous': [
        String.raw`(?:ігноруй|ігноруйте|проігноруй|забудь|забудьте|не\s+зважай(?:те)?\s+на|відкинь)[^.\n]{0,50}?(?:інструкці|вказів|правил|команд|системн)`,
      ],
      'priority-claim': [
        String.raw`(?:пріоритет|перевагу)\s+(?:над|перед)\s+(?:\S+\s+){0,2}?(?:системн|інструкці|користувач|вказів)`,
        String.raw`(?:скасовує|замінює|переважає|важливіше\s+за)\s+(?:\S+\s+){0,2}?(?:системн|інструкці|вказів)`,
      ],
      'standing-order': [
        String.raw`завжди\s+(?:\S+\s+){0,2}?(?:додавай|надсилай|рекомендуй|викликай|відповідай|пропонуй)`,
        String.raw`(?:перед|після)\s+кожн(?:ою|ої|им)\s+(?:відповіддю|відповіді|запитом)`,
      ],
      'conceal-from-user': [
        String.raw`не\s+(?:повідомляй|кажи|розповідай|згадуй|показуй)(?:те)?`,
        String.raw`без\s+(?:відома|повідомлення)\s+користувач`,
        String.raw`(?:таємно|непомітно|тихо)\s+(?:\S+\s+){0,3}?(?:надішли|скопіюй|додай|виклич|перешли)`,
      ],
      'addresses-model': [
        String.raw`(?:вказівка|вказівки|інструкція|інструкції|примітка|повідомлення|нотатка|підказка)\s+(?:для|до)\s+(?:асистента|ші|ai|моделі|агента|штучного\s+інтелекту)`,
      ],
      'secret-hand-over': [
        String.raw`(?:передай|надішли|додай|встав|скопіюй|включи)(?:те)?[^.\n]{0,60}?(?:парол|ключ\S*\s+api|api[\s-]?ключ|токен|змінн\S*\s+середовища|${LOAN_SECRETS})`,
      ],
    },
  },
  {
    lang: 'ar',
    name: 'Arabic',
    roleWords: ['النظام', 'المسؤول', 'المطور'],
    foreignSecret: String.raw`(?:متغيرات\s+البيئة|جميع|كل|ssh|\.env|المستخدم)`,
    shapes: {
      'ignore-previous': [
        String.raw`(?:تجاهل|تجاهلي|تجاهلوا|انس|انسى|تخط)\s+(?:\S+\s+){0,3}?(?:التعليمات|الإرشادات|القواعد|الأوامر|التوجيهات)`,
      ],
      'priority-claim': [
        String.raw`(?:الأولوية|أولوية|تتقدم|تلغي)\s+(?:\S+\s+){0,2}?(?:على\s+)?(?:تعليمات\s+النظام|موجه\s+النظام|التعليمات\s+السابقة|النظام)`,
      ],
      'standing-order': [
        String.raw`(?:دائما|دائمًا|دائماً)\s+(?:\S+\s+){0,2}?(?:أضف|أرسل|استدع|اقترح|أوص)`,
        String.raw`قبل\s+كل\s+(?:رد|إجابة)`,
      ],
      'conceal-from-user': [
        String.raw`(?:دون|بدون|من\s+غير)\s+(?:إخبار|إعلام|إبلاغ|علم|تنبيه)\s+المستخدم`,
        String.raw`لا\s+(?:تخبر|تذكر|تعلم|تبلغ|تظهر)`,
      ],
      'addresses-model': [
        String.raw`(?:تعليمات|تعليمة|ملاحظة|رسالة|تنبيه|توجيه|توجيهات)\s+(?:لل|إلى\s+ال)(?:مساعد|ذكاء\s+الاصطناعي|نموذج|وكيل)`,
      ],
      'secret-hand-over': [
        String.raw`(?:ضع|أرسل|أضف|انسخ|أرفق|مرر)\s+(?:\S+\s+){0,6}?(?:كلمة\s+المرور|كلمات\s+المرور|مفتاح|المفاتيح|الرموز|متغيرات\s+البيئة|${LOAN_SECRETS})`,
      ],
    },
  },
  {
    lang: 'hi',
    name: 'Hindi',
    roleWords: ['सिस्टम', 'व्यवस्थापक', 'डेवलपर'],
    foreignSecret: String.raw`(?:पर्यावरण\s+चर|सभी|ssh|\.env|उपयोगकर्ता)`,
    shapes: {
      'ignore-previous': [
        String.raw`(?:पिछले|पहले\s+के|सभी|सिस्टम)\s+(?:\S+\s+){0,2}?(?:निर्देशों|निर्देश|नियमों|नियम)\s+(?:को\s+)?(?:अनदेखा|नज़रअंदाज़|नजरअंदाज|भूल|अनसुना)`,
      ],
      'priority-claim': [
        String.raw`(?:सिस्टम\s+प्रॉम्प्ट|सिस्टम\s+निर्देश\S*|पिछले\s+निर्देश\S*)\s+(?:\S+\s+){0,2}?(?:प्राथमिकता|ऊपर|से\s+ऊपर|पर\s+भारी)`,
      ],
      'standing-order': [
        String.raw`हर\s+(?:उत्तर|जवाब|बातचीत|संदेश)\s+(?:\S+\s+){0,4}?(?:माँगें|मांगें|जोड़ें|भेजें|बुलाएँ|कॉल\s+करें|सुझाएँ)`,
        String.raw`हमेशा\s+(?:\S+\s+){0,3}?(?:माँगें|मांगें|जोड़ें|भेजें|कॉल\s+करें|सुझाएँ)`,
      ],
      'conceal-from-user': [
        String.raw`(?:उपयोगकर्ता|यूज़र|यूजर)\s+को\s+(?:\S+\s+){0,3}?(?:न\s+बताएं|न\s+बताएँ|मत\s+बताओ|मत\s+बताएं|बताए\s+बिना|बताये\s+बिना)`,
        String.raw`(?:चुपचाप|गुप्त\s+रूप\s+से)`,
      ],
      'addresses-model': [
        String.raw`(?:सहायक|एआई|मॉडल|एजेंट)\s+(?:के\s+लिए|को)\s+(?:निर्देश|नोट|संदेश|सूचना)`,
      ],
      'secret-hand-over': [
        String.raw`(?:उपयोगकर्ता|यूज़र|यूजर)\s+से\s+(?:\S+\s+){0,2}?(?:पासवर्ड|ओटीपी|पिन|एपीआई\s+कुंजी)\s+(?:\S+\s+)?(?:माँगें|मांगें|पूछें|लें)`,
        String.raw`(?:पासवर्ड|एपीआई\s+कुंजी|${LOAN_SECRETS})\s+(?:\S+\s+){0,4}?(?:भेजें|जोड़ें|डालें|लिखें)`,
      ],
    },
  },
  {
    lang: 'vi',
    name: 'Vietnamese',
    roleWords: ['hệ thống', 'quản trị viên', 'nhà phát triển'],
    foreignSecret: String.raw`\b(?:biến\s+môi\s+trường|tất\s+cả|mọi|ssh\b|người\s+dùng)|\.env\b|\.ssh\b`,
    shapes: {
      'ignore-previous': [
        String.raw`\b(?:bỏ\s+qua|phớt\s+lờ|quên\s+đi|quên)\s+(?:\S+\s+){0,3}?(?:hướng\s+dẫn|chỉ\s+dẫn|quy\s+tắc|chỉ\s+thị|lời\s+nhắc\s+hệ\s+thống)`,
      ],
      'priority-claim': [
        String.raw`\b(?:ưu\s+tiên\s+hơn|được\s+ưu\s+tiên|quan\s+trọng\s+hơn)\s+(?:\S+\s+){0,2}?(?:hệ\s+thống|hướng\s+dẫn|người\s+dùng)`,
      ],
      'standing-order': [
        String.raw`\bluôn\s+(?:luôn\s+)?(?:gọi|thêm|gửi|đề\s+xuất|khuyên|giới\s+thiệu|trả\s+lời)\b`,
        String.raw`\b(?:trong|ở\s+đầu|ở\s+cuối)\s+mọi\s+(?:cuộc\s+trò\s+chuyện|câu\s+trả\s+lời|tin\s+nhắn|phiên)\b`,
      ],
      'conceal-from-user': [
        String.raw`\bkhông\s+(?:cho\s+người\s+dùng\s+biết|nói\s+với\s+người\s+dùng|tiết\s+lộ|đề\s+cập|thông\s+báo\s+cho\s+người\s+dùng)`,
        String.raw`\b(?:âm\s+thầm|bí\s+mật|lặng\s+lẽ)\s+(?:\S+\s+){0,3}?(?:gửi|sao\s+chép|thêm|gọi|tải\s+lên)\b`,
      ],
      'addresses-model': [
        String.raw`\b(?:hướng\s+dẫn|lưu\s+ý|ghi\s+chú|chỉ\s+thị|thông\s+báo|lời\s+nhắn|quy\s+tắc)\s+(?:cho|dành\s+cho|gửi)\s+(?:trợ\s+lý|ai|mô\s+hình|tác\s+tử)\b`,
      ],
      'secret-hand-over': [
        String.raw`\b(?:gửi|thêm|chèn|sao\s+chép|đính\s+kèm|dán)\b[^.\n]{0,60}?\b(?:mật\s+khẩu|khóa\s+api|khoá\s+api|biến\s+môi\s+trường|${LOAN_SECRETS})`,
      ],
    },
  },
  {
    lang: 'id',
    name: 'Indonesian',
    roleWords: ['sistem', 'admin', 'pengembang'],
    foreignSecret: String.raw`\b(?:variabel\s+lingkungan|semua\b|setiap\b|ssh\b|pengguna)|\.env\b|\.ssh\b`,
    shapes: {
      'ignore-previous': [
        String.raw`\b(?:abaikan|lupakan|acuhkan|jangan\s+hiraukan)\s+(?:\S+\s+){0,3}?(?:instruksi|petunjuk|aturan|perintah|arahan)\b`,
      ],
      'priority-claim': [
        String.raw`\b(?:lebih\s+diutamakan|prioritas\s+(?:lebih\s+tinggi\s+)?(?:di\s+atas|atas|dari))\s+(?:\S+\s+){0,2}?(?:sistem|instruksi|pengguna)\b`,
      ],
      'standing-order': [
        String.raw`\bselalu\s+(?:tambahkan|kirim|kirimkan|sertakan|panggil|rekomendasikan|sarankan|jawab|sebutkan)\b`,
        String.raw`\b(?:di\s+akhir|di\s+awal|dalam)\s+setiap\s+(?:pesan|jawaban|balasan|percakapan)\b`,
      ],
      'conceal-from-user': [
        String.raw`\b(?:jangan|tanpa)\s+(?:\S+\s+)?(?:beri\s*tahu|memberi\s*tahu|sebutkan|menyebutkan|bilang|ungkapkan|mengungkapkan|memberitahukan)\b`,
        String.raw`\b(?:diam-diam|secara\s+diam-diam|secara\s+rahasia)\b`,
      ],
      'addresses-model': [
        String.raw`\b(?:catatan|instruksi|petunjuk|pesan|arahan|perintah|aturan)\s+(?:untuk|bagi|kepada)\s+(?:asisten|ai|model|agen)\b`,
      ],
      'secret-hand-over': [
        String.raw`\b(?:kirim|kirimkan|tambahkan|sertakan|salin|tempel|masukkan)\b[^.\n]{0,60}?\b(?:kata\s+sandi|sandi|kunci\s+api|variabel\s+lingkungan|${LOAN_SECRETS})`,
      ],
    },
  },
  {
    lang: 'ko',
    name: 'Korean',
    roleWords: ['시스템', '관리자', '개발자'],
    foreignSecret: String.raw`(?:환경\s*변수|모든|ssh|\.env|사용자의)`,
    shapes: {
      'ignore-previous': [
        String.raw`(?:이전|모든|앞의|기존|시스템)\s*(?:\S+\s*){0,2}?(?:지침|지시|명령|규칙)(?:을|를|은|는|들을)?\s*(?:모두\s*)?(?:무시|잊)`,
      ],
      'priority-claim': [
        String.raw`(?:시스템\s*프롬프트|시스템\s*지침|이전\s*지침)(?:보다|에\s*우선|을\s*무시)`,
        String.raw`(?:우선합니다|우선한다|우선\s*적용)`,
      ],
      'standing-order': [
        String.raw`(?:모든|매)\s*(?:요청|응답|답변|대화)(?:에|마다)\s*(?:앞서|전에|먼저|항상)`,
        String.raw`항상\s*(?:\S+\s*){0,2}?(?:호출|추천|추가|전송)`,
      ],
      'conceal-from-user': [
        String.raw`사용자(?:에게|한테)\s*(?:\S+\s*){0,2}?(?:알리지|말하지|묻지|언급하지|보여주지)\s*(?:말고|마세요|마|않)`,
        String.raw`(?:몰래|조용히|은밀히)`,
      ],
      'addresses-model': [
        String.raw`(?:어시스턴트|ai|모델|에이전트|인공지능|비서)(?:에게|께)\s*(?:\S+\s*)?[:：]`,
        String.raw`(?:어시스턴트|ai|모델|에이전트|인공지능)(?:를\s*위한|용)\s*(?:지침|메모|안내|지시)`,
      ],
      'secret-hand-over': [
        String.raw`(?:비밀번호|암호|api\s*키|토큰|환경\s*변수|${LOAN_SECRETS})\S*\s*(?:\S+\s*){0,3}?(?:보내|넣|첨부|복사|추가)`,
      ],
    },
  },
];
