/** Classes of environments (DESIGN §1). */
export const EnvironmentClass = {
  development: 'development',
  staging: 'staging',
  production: 'production',
} as const;
export type EnvironmentClass = (typeof EnvironmentClass)[keyof typeof EnvironmentClass];

/** One environment of a project. */
export interface Environment {
  tenant: string;
  project: string;
  name: string;
  class: EnvironmentClass;
  /** A frozen environment refuses `shared-write` and `production` calls. */
  frozen: boolean;
}

/** True when `value` names an environment class. */
export function isEnvironmentClass(value: unknown): value is EnvironmentClass {
  return value === 'development' || value === 'staging' || value === 'production';
}
