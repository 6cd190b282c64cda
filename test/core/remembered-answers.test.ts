// RememberedAnswers: each key's answer worked out once, undefined answers included, and all dropped once the limit is
// reached.
import { describe, expect, it } from 'vitest';
import { RememberedAnswers } from '../../src/core/remembered-answers.ts';

describe('RememberedAnswers', () => {
  it('works an answer out once per key, an undefined one too', () => {
    const asked: string[] = [];
    const answers = new RememberedAnswers<string, number | undefined>(8);
    const length = (key: string): number | undefined => (asked.push(key), key === '' ? undefined : key.length);
    expect([answers.get('abc', length), answers.get('', length), answers.get('abc', length), answers.get('', length)]).toEqual([3, undefined, 3, undefined]);
    expect(asked).toEqual(['abc', '']);
  });

  it('starts over once it holds its limit', () => {
    const asked: number[] = [];
    const answers = new RememberedAnswers<number, number>(2);
    const double = (key: number): number => (asked.push(key), 2 * key);
    for (const key of [1, 2, 1, 3, 1, 3]) answers.get(key, double);
    // 1 and 2 kept; 3 finds it full and starts over (3 alone); 1 is worked out again, 3 is still kept.
    expect(asked).toEqual([1, 2, 3, 1]);
  });

  it('hands the caller\'s input to compute the first time, and answers from memory after', () => {
    const answers = new RememberedAnswers<string, string>(4);
    const greet = (key: string, input: string): string => `${input} ${key}`;
    expect(answers.get('ada', greet, 'hello')).toBe('hello ada');
    expect(answers.get('ada', greet, 'bye')).toBe('hello ada');
  });
});
