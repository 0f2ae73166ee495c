/**
 * @module The exact decimal value of a JSON number, as fixed-point integers. A number is read as
 * the text ECMAScript prints for it (the shortest text that parses back to the same double, which
 * is also what a tool receives when the arguments are serialised again), never as the binary
 * fraction behind it; a reading that would need rounding is refused, never rounded.
 */

/** `value = units / 10^scale`, with the smallest scale (no trailing fractional zeros). */
export interface ExactDecimal {
  readonly units: bigint;
  readonly scale: number;
}

/** ECMAScript Number::toString output: `-`? digits (`.` digits)? (`e` sign digits)?. */
const NUMBER_TEXT = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/;

/** Null for NaN and ±Infinity (and anything that is not a number). */
export function exactDecimal(value: unknown): ExactDecimal | null {
  if (typeof value !== 'number' || !Number.isFinite(value)) return null;
  const match = NUMBER_TEXT.exec(String(value));
  if (match === null) return null;
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = match;
  let units = BigInt(`${sign}${whole}${fraction}`);
  let scale = fraction.length - Number(exponent);
  if (scale < 0) {
    units *= 10n ** BigInt(-scale);
    scale = 0;
  }
  while (scale > 0 && units % 10n === 0n) {
    units /= 10n;
    scale -= 1;
  }
  return { units, scale };
}

/**
 * The number in units of 10^-places (cents for 2), or null when it has more decimal places than
 * that, or is not a finite number. Exact: `toFixedPoint(100.5, 2) === 10050n`.
 */
export function toFixedPoint(value: unknown, places: number): bigint | null {
  const exact = exactDecimal(value);
  if (exact === null || exact.scale > places) return null;
  return exact.units * 10n ** BigInt(places - exact.scale);
}
