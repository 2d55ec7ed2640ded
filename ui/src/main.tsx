// The dashboard's entry: the live state, loaded once, and the page for the address's hash.
import { render } from 'preact';
import { App } from './app.tsx';
import { createLive } from './live.ts';
import './style.css';

const live = createLive();
render(<App live={live} />, document.getElementById('app')!);
void live.load().catch((err: unknown) => console.warn('loading the dashboard failed', err));
