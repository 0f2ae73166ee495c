/**
 * @module C2SP signed-note with Ed25519 and C2SP tlog-checkpoint bodies. Pure: node:crypto only.
 * A note is its text (ending in a newline), a blank line, then lines `— <name> <base64(key id ||
 * signature)>`; key id = SHA-256(name || 0x0A || 0x01 || public key)[:4]; the signature covers
 * the text including its final newline. A checkpoint's text is `<origin>\n<size>\n<base64
 * root>\n`. Verifier keys are shared as `<name>+<hex key id>+<base64(0x01 || public key)>`.
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  sign,
  verify,
} from 'node:crypto';

const ED25519 = 0x01;
const DASH = '\u2014 ';
/** SPKI DER prefix of an Ed25519 public key; the raw 32 bytes follow it. */
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export interface NoteVerifier {
  readonly name: string;
  readonly keyId: Buffer;
  readonly key: KeyObject;
}

function rawPublicKey(key: KeyObject): Buffer {
  const der = key.export({ type: 'spki', format: 'der' });
  return der.subarray(der.length - 32);
}

export function keyId(name: string, publicKey: Buffer): Buffer {
  return createHash('sha256')
    .update(Buffer.from(`${name}\n`, 'utf8'))
    .update(Buffer.from([ED25519]))
    .update(publicKey)
    .digest()
    .subarray(0, 4);
}

function checkName(name: string): void {
  if (name === '' || /[\s+]/u.test(name))
    throw new TypeError('a key name is non-empty, without spaces or +');
}

/** The text form of a verifier key, for the export bundle and `--key`. */
export function verifierKeyText(name: string, publicKey: KeyObject): string {
  checkName(name);
  const raw = rawPublicKey(publicKey);
  return `${name}+${keyId(name, raw).toString('hex')}+${Buffer.concat([Buffer.from([ED25519]), raw]).toString('base64')}`;
}

export function parseVerifierKey(text: string): NoteVerifier {
  // The base64 key may itself hold '+': only the first two separate fields.
  const trimmed = text.trim();
  const a = trimmed.indexOf('+');
  const b = a < 0 ? -1 : trimmed.indexOf('+', a + 1);
  if (a < 0 || b < 0) throw new TypeError('a verifier key is NAME+KEYID+BASE64KEY');
  const name = trimmed.slice(0, a);
  const hexId = trimmed.slice(a + 1, b);
  const b64 = trimmed.slice(b + 1);
  checkName(name);
  const blob = Buffer.from(b64, 'base64');
  if (blob.length !== 33 || blob[0] !== ED25519)
    throw new TypeError('only Ed25519 verifier keys are supported');
  const raw = blob.subarray(1);
  const id = keyId(name, raw);
  if (id.toString('hex') !== hexId.toLowerCase())
    throw new TypeError('the verifier key id does not match the key');
  const key = createPublicKey({
    key: Buffer.concat([SPKI_PREFIX, raw]),
    format: 'der',
    type: 'spki',
  });
  return { name, keyId: id, key };
}

export class NoteSigner {
  readonly name: string;
  readonly #key: KeyObject;
  readonly publicKey: KeyObject;
  readonly #id: Buffer;

  constructor(name: string, privateKey: KeyObject) {
    checkName(name);
    if (privateKey.asymmetricKeyType !== 'ed25519')
      throw new TypeError('the audit key must be Ed25519');
    this.name = name;
    this.#key = privateKey;
    this.publicKey = createPublicKey(privateKey);
    this.#id = keyId(name, rawPublicKey(this.publicKey));
  }

  static fromPem(name: string, pem: string): NoteSigner {
    return new NoteSigner(name, createPrivateKey(pem));
  }

  get verifierKey(): string {
    return verifierKeyText(this.name, this.publicKey);
  }

  sign(text: string): string {
    if (!text.endsWith('\n') || text.includes('\n\n'))
      throw new TypeError('note text must end in one newline');
    const sig = sign(null, Buffer.from(text, 'utf8'), this.#key);
    return `${text}\n${DASH}${this.name} ${Buffer.concat([this.#id, sig]).toString('base64')}\n`;
  }
}

export type NoteCheck =
  | { readonly ok: true; readonly text: string }
  | { readonly ok: false; readonly reason: string };

/** Opens a note: it must carry a valid signature by one of `verifiers`; never throws. */
export function openNote(note: string, verifiers: readonly NoteVerifier[]): NoteCheck {
  const cut = note.lastIndexOf('\n\n');
  if (cut < 0) return { ok: false, reason: 'not a signed note (no blank line before signatures)' };
  const text = note.slice(0, cut + 1);
  const sigLines = note.slice(cut + 2).split('\n');
  if (sigLines.pop() !== '')
    return { ok: false, reason: 'signature block does not end in a newline' };
  let unknown = 0;
  for (const line of sigLines) {
    if (!line.startsWith(DASH)) return { ok: false, reason: 'malformed signature line' };
    const [name, b64, extra] = line.slice(DASH.length).split(' ');
    if (name === undefined || b64 === undefined || extra !== undefined) {
      return { ok: false, reason: 'malformed signature line' };
    }
    const blob = Buffer.from(b64, 'base64');
    if (blob.length < 5) return { ok: false, reason: 'malformed signature line' };
    const id = blob.subarray(0, 4);
    const v = verifiers.find((k) => k.name === name && k.keyId.equals(id));
    if (!v) {
      unknown += 1;
      continue;
    }
    const good = verify(null, Buffer.from(text, 'utf8'), v.key, blob.subarray(4));
    return good
      ? { ok: true, text }
      : { ok: false, reason: `signature by ${name} does not verify` };
  }
  return {
    ok: false,
    reason: unknown > 0 ? 'signed only by keys that are not trusted' : 'no signature',
  };
}

export interface CheckpointBody {
  readonly origin: string;
  readonly size: number;
  readonly root: Buffer;
}

export function checkpointText(origin: string, size: number, root: Buffer): string {
  return `${origin}\n${size}\n${root.toString('base64')}\n`;
}

export function parseCheckpointText(text: string): CheckpointBody | null {
  const lines = text.split('\n');
  if (lines.length < 4 || lines[lines.length - 1] !== '') return null;
  const [origin, sizeText, rootText] = lines as [string, string, string];
  if (origin === '' || !/^(0|[1-9][0-9]{0,15})$/.test(sizeText)) return null;
  const root = Buffer.from(rootText, 'base64');
  if (root.length !== 32 || root.toString('base64') !== rootText) return null;
  return { origin, size: Number(sizeText), root };
}

/** A fresh Ed25519 signer (kept as PKCS#8 PEM by `toPem`). */
export function generateNoteSigner(name: string): { signer: NoteSigner; pem: string } {
  const { privateKey } = generateKeyPairSync('ed25519');
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return { signer: new NoteSigner(name, privateKey), pem };
}
