// A piscina pool made with its first task. piscina itself is imported then too: it loads worker_threads, perf_hooks,
// async_hooks and assert (~1 MB resident), which a daemon that has not yet scanned, checked a password or read aside
// never needs.
import type { Piscina } from 'piscina';

type PoolOptions = NonNullable<ConstructorParameters<typeof Piscina>[0]>;

export interface LazyPool {
  /** The pool, made on the first call. */
  started(): Promise<Piscina>;
  /** The pool if it has been made, without making it. */
  current(): Piscina | undefined;
  /** Destroys the pool if one was made or is being made; the next `started()` makes a new one. */
  destroy(): Promise<void>;
}

export function lazyPool(options: PoolOptions): LazyPool {
  let pool: Piscina | undefined;
  let making: Promise<Piscina> | undefined;
  return {
    started() {
      if (!making) {
        const made = import('piscina').then(({ Piscina: Pool }) => {
          const created = new Pool(options);
          if (making === made) pool = created;
          return created;
        });
        making = made;
      }
      return making;
    },
    current: () => pool,
    async destroy() {
      const ending = making;
      making = undefined;
      pool = undefined;
      await (await ending)?.destroy();
    },
  };
}
