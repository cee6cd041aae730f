/**
 * Split a command-line argument string the way a POSIX shell does (Python's `shlex.split`,
 * POSIX mode), so `--title "two words" --glob '*.csv'` reaches the script as four arguments.
 *
 * Rules (POSIX.1-2017, Shell Command Language §2.2 "Quoting"): blanks separate words; a
 * backslash outside quotes keeps the next character literally (a backslash-newline is removed);
 * inside single quotes every character is literal; inside double quotes a backslash escapes only
 * `$`, `` ` ``, `"`, `\` and newline. No expansion happens ($VAR, globs and ~ stay as written).
 */

/** An argument string that does not split (an unterminated quote or a trailing backslash). */
export class ArgumentSyntaxError extends Error {
  constructor(
    message: string,
    readonly position: number
  ) {
    super(message);
    this.name = 'ArgumentSyntaxError';
  }
}

const DOUBLE_QUOTE_ESCAPES = new Set(['$', '`', '"', '\\', '\n']);

/** Split `text` into arguments. Throws {@link ArgumentSyntaxError} naming the position. */
export function splitArgs(text: string): string[] {
  const out: string[] = [];
  let word = '';
  let inWord = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === ' ' || c === '\t' || c === '\n') {
      if (inWord) {
        out.push(word);
        word = '';
        inWord = false;
      }
      i++;
    } else if (c === '\\') {
      if (i + 1 >= text.length) {
        throw new ArgumentSyntaxError(`a backslash at the end (position ${i + 1}) escapes nothing`, i);
      }
      if (text[i + 1] !== '\n') {
        word += text[i + 1];
        inWord = true;
      }
      i += 2;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) {
        throw new ArgumentSyntaxError(`the single quote at position ${i + 1} is not closed`, i);
      }
      word += text.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (c === '"') {
      let j = i + 1;
      let closed = false;
      while (j < text.length) {
        const d = text[j];
        if (d === '"') {
          closed = true;
          break;
        }
        if (d === '\\' && j + 1 < text.length && DOUBLE_QUOTE_ESCAPES.has(text[j + 1])) {
          if (text[j + 1] !== '\n') {
            word += text[j + 1];
          }
          j += 2;
        } else {
          word += d;
          j++;
        }
      }
      if (!closed) {
        throw new ArgumentSyntaxError(`the double quote at position ${i + 1} is not closed`, i);
      }
      inWord = true;
      i = j + 1;
    } else {
      word += c;
      inWord = true;
      i++;
    }
  }
  if (inWord) {
    out.push(word);
  }
  return out;
}

/** Quote one argument for display so that {@link splitArgs} gives it back unchanged. */
export function quoteArg(arg: string): string {
  if (arg && /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) {
    return arg;
  }
  return `'${arg.replace(/'/g, `'"'"'`)}'`;
}

/**
 * The words of `text` a shell would have expanded and this form does not (newuser27 n11: `--path ~/x $HOME`
 * reached the script as `'~/x', '$HOME'`, where the CLI's shell gives `/root/x /root`): those starting
 * with `~` and those holding `$NAME` or `${NAME}` — as Kubernetes `args` and Docker's exec form, the
 * form passes words as typed. [] when none, or when the text does not split.
 */
export function unexpandedWords(text: string): string[] {
  let words: string[];
  try {
    words = splitArgs(text);
  } catch {
    return [];
  }
  return words.filter(w => w.startsWith('~') || /\$(\{[A-Za-z_]|[A-Za-z_])/.test(w));
}
