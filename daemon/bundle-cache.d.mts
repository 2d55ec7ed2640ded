export function markInUse(dir: string, pid?: number): void;
export function pruneBundles(cache: string, keep: string): void;
