import { describe, expect, it } from 'vitest'
import { didYouMean, nearestCode, nearestName } from '../../src/core/nearest.js'

const COUNTRIES = ['my', 'gb', 'bg']

describe('nearestCode: short codes (country codes) too', () => {
  it('takes one letter off when no other code is as near', () => {
    expect(nearestName('mx', COUNTRIES)).toBeUndefined()
    expect(nearestCode('mx', COUNTRIES)).toBe('my')
    expect(nearestCode('gr', COUNTRIES)).toBe('gb')
    expect(nearestCode('MY', COUNTRIES)).toBe('my')
  })

  it('names none when two are as near, or none is one letter off', () => {
    expect(nearestCode('bb', COUNTRIES)).toBeUndefined()
    expect(nearestCode('fr', COUNTRIES)).toBeUndefined()
  })

  it('a longer name is judged as nearestName judges it', () => {
    expect(nearestCode('STREAMPLU', ['GAMECLUB', 'STREAMPLUS'])).toBe('STREAMPLUS')
    expect(nearestCode('STREEEAMPL', ['STREAMPLUS'])).toBeUndefined()
  })
})

describe('didYouMean', () => {
  it('is "; did you mean X?" or nothing', () => {
    expect(didYouMean('STREAMPLU', ['STREAMPLUS'])).toBe('; did you mean STREAMPLUS?')
    expect(didYouMean('NOPE', ['STREAMPLUS'])).toBe('')
    expect(didYouMean('mx', COUNTRIES)).toBe('')
    expect(didYouMean('mx', COUNTRIES, true)).toBe('; did you mean my?')
  })
})
