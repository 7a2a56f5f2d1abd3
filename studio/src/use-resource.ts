import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { messageOf } from './api.js';
import { useLiveEvents } from './live.js';

/** What {@link useResource} holds: the last good value, whether a load runs, the last error. */
export interface Resource<T> {
  value: T | undefined;
  loading: boolean;
  error: string | null;
  reload: () => void;
}

/**
 * Loads `load()` now and again whenever one of the live event `types` arrives (so every open
 * Studio stays current without a reload), keeping the previous value on screen while it loads.
 */
export function useResource<T>(
  load: () => Promise<T>,
  deps: readonly unknown[],
  types: readonly string[] = [],
): Resource<T> {
  const [value, setValue] = useState<T | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const generation = useRef(0);
  const run = useCallback(load, deps);
  const reload = useCallback(() => {
    const mine = ++generation.current;
    setLoading(true);
    run().then(
      (v) => {
        if (mine !== generation.current) return;
        setValue(v);
        setError(null);
        setLoading(false);
      },
      (e: unknown) => {
        if (mine !== generation.current) return;
        setError(messageOf(e));
        setLoading(false);
      },
    );
  }, [run]);
  useEffect(reload, [reload]);
  useLiveEvents(types, reload);
  return { value, loading, error, reload };
}
