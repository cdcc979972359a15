/** How the CLI reads a number a user typed: as the control API reads a query number (contract/defaults.ts). */
import { DECIMAL, WHOLE_DECIMAL } from '../contract/defaults.js'

/** The number `text` writes, or NaN when it is not plain decimal digits (with a fraction when `fraction`). */
export function decimal(text: string, fraction = false): number {
  return (fraction ? DECIMAL : WHOLE_DECIMAL).test(text) ? Number(text) : NaN
}
