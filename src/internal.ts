/**
 * @module
 * Symbols through which the handle types talk to each other (a Prover registering with its Key and
 * Context) without widening their public API. Not exported by mod.ts.
 */

/** Registers a user of a handle; closing the handle is refused (BUSY) while it has users. */
export const ADD_USER = Symbol("cuzk.addUser");
/** Unregisters a user added with ADD_USER. */
export const REMOVE_USER = Symbol("cuzk.removeUser");

/** A handle that others can hold on to. */
export interface Shareable {
  [ADD_USER](user: object): void;
  [REMOVE_USER](user: object): void;
}
