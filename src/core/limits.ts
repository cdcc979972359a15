/** Bounds the engine keeps whatever a world says (zod-free: the engine reads them at start, the schema when checking). */

/** The longest any rule may hold one answer (delay_ms, delay_per_unit and both steps' delays together). */
export const MAX_DELAY_MS = 60_000
