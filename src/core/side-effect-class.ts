/** Side-effect classes, ordered: each may do what the ones before it may (DESIGN §1). */
export const SideEffectClass = {
  read: 'read',
  workspaceWrite: 'workspace-write',
  sharedWrite: 'shared-write',
  production: 'production',
} as const;
export type SideEffectClass = (typeof SideEffectClass)[keyof typeof SideEffectClass];

/** The classes in rising order. */
export const SIDE_EFFECT_CLASSES: readonly SideEffectClass[] = [
  'read',
  'workspace-write',
  'shared-write',
  'production',
];

/** True when `value` names a side-effect class. */
export function isSideEffectClass(value: unknown): value is SideEffectClass {
  return typeof value === 'string' && (SIDE_EFFECT_CLASSES as readonly string[]).includes(value);
}

/** Negative, zero or positive as `a` is below, equal to or above `b`. */
export function compareClass(a: SideEffectClass, b: SideEffectClass): number {
  return SIDE_EFFECT_CLASSES.indexOf(a) - SIDE_EFFECT_CLASSES.indexOf(b);
}

/** The higher of two classes. */
export function maxClass(a: SideEffectClass, b: SideEffectClass): SideEffectClass {
  return compareClass(a, b) >= 0 ? a : b;
}
