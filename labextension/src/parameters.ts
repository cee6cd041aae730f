/**
 * `NAME=VALUE` words → a notebook's parameters, read as the server's CLI and magics read `-p`
 * (`jupyter_sched.definitions.parameters.parse_parameter_words`): a value is JSON where it parses
 * (`3`, `true`, `[1, 2]`), else text (`eu`); a word without `=` or a name given twice is refused.
 * One reading for the Submit form's notebook parameters and the Scheduled notebooks form.
 */

/** `["days=3", "region=eu"]` → `{days: 3, region: "eu"}`; throws an Error naming the word at fault. */
export function parseParameterWords(words: readonly string[], label = 'parameters'): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const typed: Record<string, string> = {};
  for (const word of words) {
    const at = word.indexOf('=');
    const name = at > 0 ? word.slice(0, at).trim() : '';
    if (!name) {
      throw new Error(`${label}: "${word}" is not NAME=VALUE`);
    }
    if (name in typed) {
      throw new Error(`${label}: ${name} is given twice (${typed[name]}, ${word}): give it once`);
    }
    typed[name] = word;
    const value = word.slice(at + 1).trim();
    try {
      out[name] = JSON.parse(value);
    } catch {
      out[name] = value;
    }
  }
  return out;
}
