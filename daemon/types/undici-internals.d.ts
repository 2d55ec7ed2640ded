// undici's index attaches request() to every dispatcher and loads fetch, WebSocket, caches and
// mocks with it (~70 ms at start, against ~20 for these two); these are its own files for the two.
declare module 'undici/lib/dispatcher/pool.js' {
  import { Pool } from 'undici';
  export default Pool;
}
declare module 'undici/lib/api/api-request.js' {
  import type { Dispatcher } from 'undici';
  export default function request(this: Dispatcher, opts: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData>;
}
