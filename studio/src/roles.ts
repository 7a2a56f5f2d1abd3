import { createContext } from 'preact';
import { useContext } from 'preact/hooks';

/** The signed-in person's roles, for the views that show actions only some roles may take. */
export const RolesContext = createContext<readonly string[]>([]);

/** The signed-in person's roles (empty outside a session). */
export function useRoles(): readonly string[] {
  return useContext(RolesContext);
}
