/**
 * A small terminal text model for job logs: output arrives in chunks and is kept as lines of
 * styled runs, the way a terminal would show it.
 *
 * - `\n` ends a line; `\r` returns to the start of the line, so what follows overwrites it
 *   (progress bars such as tqdm redraw one line with `\r`); `\b` steps back one column.
 * - ANSI SGR escapes (`ESC [ … m`, ECMA-48 §8.3.117) set bold, faint, italic, underline, inverse
 *   and the 8/16 colours (30–37, 90–97, 40–47, 100–107), 256-colour (`38;5;n`) and true colour
 *   (`38;2;r;g;b`); `39`/`49`/`0` reset. `ESC [ K` erases to the end of the line. Other control
 *   sequences (cursor movement, titles) are dropped rather than shown as garbage.
 * - An escape sequence cut in two by a chunk boundary is completed by the next chunk.
 *
 * `write()` reports which lines changed, so a view re-renders only those (the last line, mostly)
 * instead of rewriting the whole log per chunk.
 *
 * Each line keeps the byte offset in the log where it starts (UTF-8, counted from `startAt()`), so a
 * view knows where the first line it still holds begins — after lines were dropped from the top, or
 * when it began at a long log's end — and can read earlier text on demand and `prepend()` it
 * (newuser26 N7). Offsets assume the log is valid UTF-8 (the server shows invalid bytes as U+FFFD).
 */

/** Text attributes of a run. Colours are palette indices (0–255) or `#rrggbb`. */
export interface IStyle {
  bold?: boolean;
  faint?: boolean;
  italic?: boolean;
  underline?: boolean;
  inverse?: boolean;
  fg?: number | string;
  bg?: number | string;
}

/** A run of text with one style. */
export interface IRun {
  text: string;
  style: IStyle;
}

/** What one `write()` changed: the first line index that differs, and how many lines there are now. */
export interface IWriteResult {
  firstChanged: number;
  lineCount: number;
  /** Lines dropped from the top to keep within `maxLines` (indices shift by this much). */
  dropped: number;
}

const ESC = '\x1b';

function sameStyle(a: IStyle, b: IStyle): boolean {
  return a.bold === b.bold && a.faint === b.faint && a.italic === b.italic && a.underline === b.underline && a.inverse === b.inverse && a.fg === b.fg && a.bg === b.bg;
}

/** One line as a flat array of cells would be costly; runs are merged on output instead. */
class Line {
  chars: string[] = [];
  styles: IStyle[] = [];

  put(column: number, ch: string, style: IStyle): void {
    while (this.chars.length < column) {
      this.chars.push(' ');
      this.styles.push({});
    }
    this.chars[column] = ch;
    this.styles[column] = style;
  }

  eraseFrom(column: number): void {
    this.chars.length = Math.min(this.chars.length, column);
    this.styles.length = this.chars.length;
  }

  runs(): IRun[] {
    const out: IRun[] = [];
    for (let i = 0; i < this.chars.length; i++) {
      const last = out[out.length - 1];
      if (last && sameStyle(last.style, this.styles[i])) {
        last.text += this.chars[i];
      } else {
        out.push({ text: this.chars[i], style: this.styles[i] });
      }
    }
    return out;
  }

  text(): string {
    return this.chars.join('');
  }
}

/** UTF-8 bytes of UTF-16 code unit `code` (a surrogate pair counts 4, on its first half). */
function utf8Units(code: number): number {
  if (code < 0x80) {
    return 1;
  }
  if (code < 0x800) {
    return 2;
  }
  if (code >= 0xd800 && code <= 0xdbff) {
    return 4;
  }
  if (code >= 0xdc00 && code <= 0xdfff) {
    return 0;
  }
  return 3;
}

/** Bytes of `text` in UTF-8. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    bytes += utf8Units(text.charCodeAt(i));
  }
  return bytes;
}

/** The terminal text model. */
export class TerminalText {
  private lines: Line[] = [new Line()];
  /** Byte offset in the log where each line of {@link lines} starts. */
  private starts: number[] = [0];
  /** Byte offset in the log after the last character taken (a pending escape not counted yet). */
  private position = 0;
  private column = 0;
  private style: IStyle = {};
  private pending = '';
  private cap: number;

  /** @param maxLines lines kept; older ones are dropped from the top (`prepend()` raises it by what it adds). */
  constructor(maxLines = 20000) {
    this.cap = maxLines;
  }

  /** Lines kept at most. */
  get maxLines(): number {
    return this.cap;
  }

  get lineCount(): number {
    return this.lines.length;
  }

  /** Byte offset in the log where the first line kept starts. */
  get firstByte(): number {
    return this.starts[0];
  }

  /** Before the first `write()`: the byte offset in the log of the first byte written. */
  startAt(offset: number): void {
    this.position = offset;
    this.starts[0] = offset;
  }

  /**
   * Put earlier text, whole lines (`text` ends with `\n`) that end where the first kept line starts,
   * above the lines kept; they are kept too. Returns how many lines were added.
   */
  prepend(text: string): number {
    if (!text) {
      return 0;
    }
    const earlier = new TerminalText(Number.MAX_SAFE_INTEGER);
    earlier.startAt(this.firstByte - utf8Length(text));
    earlier.write(text.endsWith('\n') ? text : `${text}\n`);
    const added = earlier.lines.length - 1; // the empty line after its last newline
    this.lines.unshift(...earlier.lines.slice(0, added));
    this.starts.unshift(...earlier.starts.slice(0, added));
    this.cap += added;
    return added;
  }

  /**
   * Put earlier lines above the lines kept, each with the byte offset in the log where it starts — as
   * {@link prepend}, for lines whose text shown is not their text in the log (a very long line cut for the view,
   * newuser40 N2): the offsets stay the log's, so later reads join. The last line ends where the first kept
   * line starts. Returns how many lines were added.
   */
  prependLines(lines: ReadonlyArray<{ text: string; start: number }>): number {
    if (!lines.length) {
      return 0;
    }
    const earlier = new TerminalText(Number.MAX_SAFE_INTEGER);
    earlier.startAt(lines[0].start);
    for (const line of lines) {
      earlier.starts[earlier.starts.length - 1] = line.start;
      earlier.write(`${line.text}\n`);
    }
    const added = earlier.lines.length - 1; // the empty line after the last newline
    this.lines.unshift(...earlier.lines.slice(0, added));
    this.starts.unshift(...earlier.starts.slice(0, added));
    this.cap += added;
    return added;
  }

  /** Runs of line `index`. */
  runs(index: number): IRun[] {
    return this.lines[index]?.runs() ?? [];
  }

  /** Plain text of line `index`. */
  lineText(index: number): string {
    return this.lines[index]?.text() ?? '';
  }

  /** The whole text, lines joined with `\n`. */
  text(): string {
    return this.lines.map(l => l.text()).join('\n');
  }

  /** Take a chunk of output. */
  write(chunk: string): IWriteResult {
    let data = this.pending + chunk;
    this.pending = '';
    let firstChanged = this.lines.length - 1;
    let i = 0;
    while (i < data.length) {
      const ch = data[i];
      if (ch === ESC) {
        const consumed = this.escape(data, i);
        if (consumed < 0) {
          // incomplete sequence at the end of the chunk: keep it for the next one
          this.pending = data.slice(i);
          data = data.slice(0, i);
          break;
        }
        this.position += utf8Length(data.slice(i, i + consumed));
        i += consumed;
        continue;
      }
      this.position += utf8Units(data.charCodeAt(i));
      if (ch === '\n') {
        this.lines.push(new Line());
        this.starts.push(this.position);
        this.column = 0;
      } else if (ch === '\r') {
        this.column = 0;
      } else if (ch === '\b') {
        this.column = Math.max(0, this.column - 1);
      } else if (ch === '\t') {
        const next = (Math.floor(this.column / 8) + 1) * 8;
        while (this.column < next) {
          this.current.put(this.column++, ' ', this.style);
        }
      } else if (ch >= ' ' && ch !== '\x7f') {
        this.current.put(this.column++, ch, this.style);
      }
      i++;
    }
    let dropped = 0;
    if (this.lines.length > this.cap) {
      dropped = this.lines.length - this.cap;
      this.lines.splice(0, dropped);
      this.starts.splice(0, dropped);
      firstChanged = Math.max(0, firstChanged - dropped);
    }
    return { firstChanged, lineCount: this.lines.length, dropped };
  }

  private get current(): Line {
    return this.lines[this.lines.length - 1];
  }

  /** Handle an escape sequence at `data[start]`; returns its length, or -1 when incomplete. */
  private escape(data: string, start: number): number {
    if (start + 1 >= data.length) {
      return -1;
    }
    const kind = data[start + 1];
    if (kind === '[') {
      // CSI: parameters 0x30–0x3F, intermediates 0x20–0x2F, final byte 0x40–0x7E
      let j = start + 2;
      while (j < data.length && data.charCodeAt(j) >= 0x20 && data.charCodeAt(j) <= 0x3f) {
        j++;
      }
      if (j >= data.length) {
        return -1;
      }
      const final = data[j];
      const params = data.slice(start + 2, j);
      if (final === 'm') {
        this.sgr(params);
      } else if (final === 'K') {
        const mode = params === '' ? 0 : Number(params);
        if (mode === 0) {
          this.current.eraseFrom(this.column);
        } else if (mode === 2) {
          this.current.eraseFrom(0);
        }
      } else if (final === 'G') {
        this.column = Math.max(0, (Number(params) || 1) - 1);
      }
      return j - start + 1;
    }
    if (kind === ']') {
      // OSC (window titles, hyperlinks): up to BEL or ESC \
      for (let j = start + 2; j < data.length; j++) {
        if (data[j] === '\x07') {
          return j - start + 1;
        }
        if (data[j] === ESC && j + 1 < data.length && data[j + 1] === '\\') {
          return j - start + 2;
        }
      }
      return -1;
    }
    // a two-character escape (ESC 7, ESC =, ...): drop it
    return 2;
  }

  /** Apply SGR parameters (`1;31`, `38;5;208`, `` = reset). */
  private sgr(params: string): void {
    const codes = params === '' ? [0] : params.split(/[;:]/).map(p => (p === '' ? 0 : Number(p)));
    const style: IStyle = { ...this.style };
    for (let k = 0; k < codes.length; k++) {
      const c = codes[k];
      if (c === 0) {
        for (const key of Object.keys(style) as (keyof IStyle)[]) {
          delete style[key];
        }
      } else if (c === 1) {
        style.bold = true;
      } else if (c === 2) {
        style.faint = true;
      } else if (c === 3) {
        style.italic = true;
      } else if (c === 4) {
        style.underline = true;
      } else if (c === 7) {
        style.inverse = true;
      } else if (c === 22) {
        delete style.bold;
        delete style.faint;
      } else if (c === 23) {
        delete style.italic;
      } else if (c === 24) {
        delete style.underline;
      } else if (c === 27) {
        delete style.inverse;
      } else if (c >= 30 && c <= 37) {
        style.fg = c - 30;
      } else if (c >= 90 && c <= 97) {
        style.fg = c - 90 + 8;
      } else if (c === 39) {
        delete style.fg;
      } else if (c >= 40 && c <= 47) {
        style.bg = c - 40;
      } else if (c >= 100 && c <= 107) {
        style.bg = c - 100 + 8;
      } else if (c === 49) {
        delete style.bg;
      } else if (c === 38 || c === 48) {
        const key = c === 38 ? 'fg' : 'bg';
        if (codes[k + 1] === 5 && k + 2 < codes.length) {
          style[key] = Math.max(0, Math.min(255, codes[k + 2]));
          k += 2;
        } else if (codes[k + 1] === 2 && k + 4 < codes.length) {
          const hex = codes
            .slice(k + 2, k + 5)
            .map(v => Math.max(0, Math.min(255, v)).toString(16).padStart(2, '0'))
            .join('');
          style[key] = `#${hex}`;
          k += 4;
        }
      }
    }
    this.style = style;
  }
}

/** CSS classes and inline style of a run: palette colours 0–15 use JupyterLab's ANSI variables. */
export function runAttributes(style: IStyle): { className: string; css: Record<string, string> } {
  const classes: string[] = [];
  const css: Record<string, string> = {};
  const colour = (value: number | string | undefined, kind: 'fg' | 'bg'): void => {
    if (value === undefined) {
      return;
    }
    if (typeof value === 'string') {
      css[kind === 'fg' ? 'color' : 'backgroundColor'] = value;
    } else if (value < 16) {
      classes.push(`jp-sched-ansi-${kind}-${value}`);
    } else {
      css[kind === 'fg' ? 'color' : 'backgroundColor'] = palette256(value);
    }
  };
  const fg = style.inverse ? style.bg : style.fg;
  const bg = style.inverse ? style.fg : style.bg;
  colour(fg, 'fg');
  colour(bg, 'bg');
  if (style.inverse && fg === undefined) {
    classes.push('jp-sched-ansi-inverse');
  }
  if (style.bold) {
    classes.push('jp-sched-ansi-bold');
  }
  if (style.faint) {
    classes.push('jp-sched-ansi-faint');
  }
  if (style.italic) {
    classes.push('jp-sched-ansi-italic');
  }
  if (style.underline) {
    classes.push('jp-sched-ansi-underline');
  }
  return { className: classes.join(' '), css };
}

/** xterm's 256-colour palette entry 16–255 as `#rrggbb` (6×6×6 cube, then 24 greys). */
export function palette256(index: number): string {
  const hex = (v: number) => v.toString(16).padStart(2, '0');
  if (index >= 232) {
    const v = 8 + (index - 232) * 10;
    return `#${hex(v)}${hex(v)}${hex(v)}`;
  }
  const i = index - 16;
  const level = (n: number) => (n === 0 ? 0 : 55 + n * 40);
  return `#${hex(level(Math.floor(i / 36)))}${hex(level(Math.floor(i / 6) % 6))}${hex(level(i % 6))}`;
}
