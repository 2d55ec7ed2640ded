// What a session may do in its worktree (DESIGN §8), without TypeBox: the dashboard imports the
// list for its picker, and a schema module would bring the whole of TypeBox into its bundle.
export const MODES = ['read', 'edit', 'full'] as const;
