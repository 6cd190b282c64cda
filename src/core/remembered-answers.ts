// Answers of a pure function of a key that recurs (a request header a client sends every time, a feed's root URL, the
// shape of a query), worked out once each. At most `limit` are kept, and all of them are dropped when full: such keys
// are few in practice, and a caller sending a new one each time gains nothing but loses nothing either.
export class RememberedAnswers<K, V> {
  readonly #answers = new Map<K, V>();
  readonly #limit: number;

  constructor(limit: number) {
    this.#limit = limit;
  }

  /**
   * The answer for `key`, from `compute` the first time (an undefined answer is remembered too). `input` is handed to
   * `compute` as it is: callers on a request's path pass what the answer is worked out from instead of making a closure
   * per call.
   */
  get<I = undefined>(key: K, compute: (key: K, input: I) => V, input?: I): V {
    const known = this.#answers.get(key);
    if (known !== undefined || this.#answers.has(key)) return known as V;
    const answer = compute(key, input as I);
    if (this.#answers.size >= this.#limit) this.#answers.clear();
    this.#answers.set(key, answer);
    return answer;
  }
}
