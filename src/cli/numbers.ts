/**
 * How the CLI reads a number a user typed: decimal digits only (a fraction where the option takes
 * one), as the control API reads a query number. `Number()` alone took 0x10 as 16, 1e3 as 1000 and
 * ' 80' or '' as numbers.
 */
const WHOLE = /^\d+$/
const WITH_FRACTION = /^\d+(\.\d+)?$/

/** The number `text` writes, or NaN when it is not plain decimal digits (with a fraction when `fraction`). */
export function decimal(text: string, fraction = false): number {
  return (fraction ? WITH_FRACTION : WHOLE).test(text) ? Number(text) : NaN
}
