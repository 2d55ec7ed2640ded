// git in tests needs an identity; set once for this process and the daemons it starts.
process.env.GIT_AUTHOR_NAME ??= 'grove test';
process.env.GIT_AUTHOR_EMAIL ??= 'test@grove.invalid';
process.env.GIT_COMMITTER_NAME ??= 'grove test';
process.env.GIT_COMMITTER_EMAIL ??= 'test@grove.invalid';
// The user's own git config must not change what tests see (hooks, default branch, signing).
process.env.GIT_CONFIG_NOSYSTEM = '1';
process.env.GIT_CONFIG_GLOBAL = '/dev/null';
