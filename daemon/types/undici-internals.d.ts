// undici's index attaches request() to every dispatcher and loads fetch, WebSocket, caches and
// mocks with it (~70 ms at start, against ~20 for the Pool alone); this is its own file for the Pool.
declare module 'undici/lib/dispatcher/pool.js' {
  import { Pool } from 'undici';
  export default Pool;
}
