/**
 * Text from the news — titles, entity names, answers, URLs — is untrusted. Written to a terminal
 * as it is, a control character in it could rewrite what was printed before (a carriage return),
 * move the cursor or send escape sequences to the terminal. Every line the commands print passes
 * through `printable`: control characters become visible escapes (`\u001b`), line breaks and tabs
 * stay.
 */
// C0 controls other than tab and line feed, DEL, C1 controls, and the Unicode line/paragraph
// separators some terminals honour.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g;

export function printable(text: string): string {
  return text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
