import type { Plugin } from 'vite';

/** The most the first view may weigh, gzipped, in bytes. */
export declare const FIRST_VIEW_BUDGET: number;

/** A Vite plugin printing the first view's gzip size and failing the build above `budget`. */
export declare function bundleBudget(budget?: number): Plugin;
