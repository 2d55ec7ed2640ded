// The dashboard's entry: the live state, loaded once, and the page for the address's hash.
import { render } from 'preact';
import { HOST } from './api.ts';
import { App } from './app.tsx';
import { createLive } from './live.ts';
import './style.css';

if (HOST !== null) document.title = `grove · ${HOST}`;
const live = createLive();
render(<App live={live} />, document.getElementById('app')!);
void live.load();
