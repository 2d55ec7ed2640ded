// The terminal itself (DESIGN §21): @xterm/xterm in a box, fitted to it, attached to a session's
// WebSocket through terminal-link.ts. Frames go straight to xterm, which draws once per animation
// frame. terminal.tsx loads this module when it first shows a terminal: the board's bundle does
// not carry xterm.
import { FitAddon } from '@xterm/addon-fit';
import { Terminal as XTerm, type ITheme } from '@xterm/xterm';
import { openLink, type LinkState } from './terminal-link.ts';

// As many lines as a long agent run prints; xterm keeps them in typed arrays and draws only the
// rows in view.
export const SCROLLBACK = 100_000;

// The ANSI colours on each scheme's background (style.css --code-bg), each readable on it; xterm
// lifts any pair below 4.5:1 (minimumContrastRatio), as the dashboard's own text is.
const LIGHT = ['#1d1f21', '#b3261e', '#1f7a3a', '#8a5a00', '#1a5fb4', '#8e3ea8', '#0f6f78', '#5f6368', '#4a4d50', '#c01c28', '#26763f', '#986a00', '#1c71d8', '#a347ba', '#1b7f88', '#3d4043'];
const DARK = ['#3a3d41', '#f28b82', '#7bd08f', '#fdd663', '#8ab4f8', '#d7aefb', '#78d9ec', '#d0d0cc', '#80868b', '#f6aea9', '#a8dab5', '#fde293', '#aecbfa', '#e9d2fd', '#a1e4f2', '#ffffff'];
const NAMES = ['black', 'red', 'green', 'yellow', 'blue', 'magenta', 'cyan', 'white'] as const;

const DARK_QUERY = '(prefers-color-scheme: dark)';

// The scheme the dashboard shows (style.css follows the OS setting): its colours, read from the page.
function themeOf(el: Element): ITheme {
  const css = getComputedStyle(el);
  const v = (name: string) => css.getPropertyValue(name).trim();
  const palette = matchMedia(DARK_QUERY).matches ? DARK : LIGHT;
  const theme: Record<string, string> = {
    background: v('--code-bg'),
    foreground: v('--fg'),
    cursor: v('--fg'),
    cursorAccent: v('--code-bg'),
    selectionBackground: v('--focus') + '55',
    selectionInactiveBackground: v('--muted') + '44',
  };
  NAMES.forEach((name, i) => {
    theme[name] = palette[i]!;
    theme[`bright${name[0]!.toUpperCase()}${name.slice(1)}`] = palette[i + 8]!;
  });
  return theme;
}

export interface Mounted {
  focus(): void;
  dispose(): void;
}

// A terminal in `el` on the session's socket at `url`, connected until disposed; `onState` hears
// how the connection stands.
export function mountTerminal(el: HTMLElement, url: (offset: number | null) => string, onState: (state: LinkState) => void): Mounted {
  const term = new XTerm({
    scrollback: SCROLLBACK,
    fontFamily: "ui-monospace, 'SFMono-Regular', Menlo, Consolas, monospace",
    fontSize: 13,
    minimumContrastRatio: 4.5,
    theme: themeOf(el),
  });
  const fit = new FitAddon();
  term.loadAddon(fit);
  term.open(el);
  const refit = () => {
    // Not laid out (a closed box): there is no size to fit to.
    if (fit.proposeDimensions()) fit.fit();
  };
  refit();
  // While a screen is drawn at the size it was kept at, that size is not the program's to be told:
  // the box's is, once fitted again.
  let drawing = false;
  const link = openLink({
    url,
    screen: {
      // Drawn at the size it was kept at, then fitted to the box again (which tells the program).
      redraw: (f) => {
        term.reset();
        drawing = true;
        term.resize(f.cols, f.rows);
        drawing = false;
        term.write(f.data, refit);
      },
      write: (data) => term.write(data),
    },
    onState,
    // The box's size, not the terminal's, which is the kept screen's while that is drawn.
    onOpen: () => {
      const box = fit.proposeDimensions();
      link.send({ type: 'resize', cols: box?.cols ?? term.cols, rows: box?.rows ?? term.rows });
    },
  });
  term.onData((data) => link.send({ type: 'input', data }));
  // The box says its size in columns and rows (data-size), as the program is told it.
  const sized = () => (el.dataset.size = `${term.cols}x${term.rows}`);
  sized();
  term.onResize(({ cols, rows }) => {
    sized();
    if (!drawing) link.send({ type: 'resize', cols, rows });
  });
  term.attachCustomKeyEventHandler((e) => {
    if (e.type !== 'keydown') return true;
    const mod = e.ctrlKey || e.metaKey;
    // Ctrl/Cmd+C with a selection copies (the browser's copy event, which xterm answers with the
    // selection); without one, Ctrl+C is the program's interrupt. Ctrl+Shift+C, a terminal's copy
    // key, is no copy command to the browser: the selection is written to the clipboard here.
    if (mod && e.key.toLowerCase() === 'c' && e.shiftKey) {
      if (term.hasSelection()) void navigator.clipboard?.writeText(term.getSelection()).catch(() => {});
      e.preventDefault();
      return false;
    }
    if (mod && e.key.toLowerCase() === 'c' && term.hasSelection()) return false;
    // Ctrl+Shift+V pastes (the browser's paste event); Ctrl+V is the program's.
    if (e.ctrlKey && e.shiftKey && e.key.toLowerCase() === 'v') return false;
    // Ctrl+\ leaves the terminal, as it detaches `grove attach`: Tab goes on from its box.
    if (e.ctrlKey && e.key === '\\') {
      e.preventDefault();
      el.focus();
      return false;
    }
    return true;
  });
  let frame = 0;
  const observer = new ResizeObserver(() => {
    frame ||= requestAnimationFrame(() => {
      frame = 0;
      refit();
    });
  });
  observer.observe(el);
  const scheme = matchMedia(DARK_QUERY);
  const recolour = () => (term.options.theme = themeOf(el));
  scheme.addEventListener('change', recolour);
  return {
    focus: () => term.focus(),
    dispose() {
      link.close();
      observer.disconnect();
      cancelAnimationFrame(frame);
      scheme.removeEventListener('change', recolour);
      term.dispose();
    },
  };
}
