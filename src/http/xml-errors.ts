// What is wrong with a body that is not well-formed XML, and where, in words a client's author reads:
// the validator's own messages name its internals (`Invalid '[ "sms", "message"]' found.`).

interface ValidatorError {
  code: string;
  msg: string;
  line: number;
  col: number;
}

const at = (line: number, col: number) => `line ${line}, column ${col}`;

/** Line and column of a character of the body, or undefined when it is not found (-1). */
function positionOf(xml: string, index: number): string | undefined {
  if (index < 0) return undefined;
  const before = xml.slice(0, index).split('\n');
  return at(before.length, before[before.length - 1].length + 1);
}

/** Where the body ends: an unclosed element is only noticed there. */
function endOf(xml: string): string {
  const lines = xml.split('\n');
  return at(lines.length, lines[lines.length - 1].length + 1);
}

/** One sentence: what is wrong, then where (line and column in the body as sent). */
export function describeXmlError(xml: string, err: ValidatorError): string {
  const where = at(err.line, err.col);
  const msg = err.msg;
  let m = /^Tag '(.*)' is an invalid name\.$/.exec(msg);
  if (m) {
    // The validator points past the name; the client looks for where the tag starts.
    const tag = positionOf(xml, xml.indexOf(`<${m[1]}`)) ?? where;
    if (m[1].startsWith('-')) {
      return `a raw <${m[1]}> in a text is read as a tag (${tag}): write it &lt;${m[1]}&gt; or wrap the text in <![CDATA[…]]>`;
    }
    return `<${m[1]}> is not a valid element name (${tag})`;
  }
  m =
    /^Expected closing tag '(.*)' \(opened in line (\d+), col (\d+)\) instead of closing tag '(.*)'\.$/.exec(
      msg,
    );
  if (m)
    return `</${m[4]}> found where </${m[1]}> was expected (${where}); <${m[1]}> was opened at ${at(Number(m[2]), Number(m[3]))}`;
  m = /^Closing tag '(.*)' has not been opened\.$/.exec(msg);
  if (m) return `</${m[1]}> closes an element that was never opened (${where})`;
  m = /^Unclosed tag '(.*)'\.$/.exec(msg);
  if (m)
    return `<${m[1]}> is never closed: the body ends first (${endOf(xml)}); <${m[1]}> was opened at ${where}`;
  if (msg.startsWith("Invalid '[")) {
    const names = [...msg.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((n) => `<${n[1]}>`).reverse();
    return `the body ends (${endOf(xml)}) before ${names.join(', ')} are closed`;
  }
  if (msg === "char '&' is not expected.") return `a raw & must be written &amp; (${where})`;
  if (msg === 'Start tag expected.' || (err.code === 'InvalidChar' && err.line === 1 && err.col === 1)) {
    return 'the body does not start with an element, such as <sms>';
  }
  if (msg === 'Multiple possible root nodes found.' || msg === 'Extra text at the end') {
    return `there is something after the root element (${where}): the body holds one root, such as <sms>…</sms>`;
  }
  // Attribute and character errors already say what they found, in a sentence.
  return `${msg.replace(/\.$/, '')} (${where})`;
}
