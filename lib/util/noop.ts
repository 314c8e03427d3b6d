/** Does nothing: the one shared function for a callback, listener or catch that has nothing to do. */
export function noop(): void {}
