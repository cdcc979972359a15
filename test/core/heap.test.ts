import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MinHeap } from '../../src/core/heap.js'

describe('event queue (min-heap)', () => {
  it('pops in (at, seq) order under any mix of pushes, pops, moves of the top', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.integer({ min: 0, max: 20 }), fc.constant(-1), fc.constant(-2)), { maxLength: 400 }), (ops) => {
        const heap = new MinHeap<{ at: number; seq: number }>()
        const model: { at: number; seq: number }[] = []
        let seq = 0
        for (const op of ops) {
          if (op >= 0) {
            const e = { at: op, seq: ++seq }
            heap.push(e)
            model.push(e)
            continue
          }
          model.sort((a, b) => a.at - b.at || a.seq - b.seq)
          if (op === -2) {
            // The top moves to a later time and sinks to its place.
            const top = heap.peek()
            expect(top).toBe(model[0])
            if (top) {
              top.at += 7
              top.seq = ++seq
              heap.retop()
            }
            continue
          }
          expect(heap.pop()).toBe(model.shift())
          expect(heap.size).toBe(model.length)
        }
        model.sort((a, b) => a.at - b.at || a.seq - b.seq)
        for (const e of model) expect(heap.pop()).toBe(e)
        expect(heap.pop()).toBeUndefined()
      }),
      { numRuns: 500 },
    )
  })
})
