// chatplate compare's `hf-jinja` engine: renders one chat template with @huggingface/jinja
// (the engine of transformers.js and the Hub), with the variables transformers.js's
// apply_chat_template passes. Reads one JSON object on stdin, writes one on stdout:
// {"prompt"} or {"error"}, with "version"; {"missing"} when the package cannot be loaded.
// With `--lines` (a corpus report), it reads one request a line and answers each on a
// line, so one Node serves the whole report.
//
// The package is loaded by the absolute folder chatplate found it in ("package": see
// compare/hf_jinja.rs), never by Node's search from the working directory, which would
// find a node_modules folder of the fixture's tree.
const fs = require("node:fs");
const path = require("node:path");

function load(folder) {
  const meta = JSON.parse(fs.readFileSync(path.join(folder, "package.json"), "utf8"));
  return { jinja: require(folder), version: String(meta.version || "unknown") };
}

// The engine's own strftime_now reads `new Date()` in local time: the fixed clock is made
// that Date, in UTC, so the naive clock prints as given.
const RealDate = Date;

function fixClock(clock) {
  process.env.TZ = "UTC";
  const fixed = new RealDate(clock + "Z").getTime();
  globalThis.Date = class extends RealDate {
    constructor(...args) {
      super(...(args.length === 0 ? [fixed] : args));
    }
    static now() {
      return fixed;
    }
  };
}

// As transformers.js's apply_chat_template: `tools` and `documents` are always there
// (null when not given, so `tools is not none` is false), the special tokens and the
// other variables after them.
function render(jinja, data) {
  globalThis.Date = RealDate;
  if (data.clock) fixClock(data.clock);
  const context = {
    messages: data.messages,
    add_generation_prompt: data.add_generation_prompt,
    tools: data.tools ?? null,
    documents: data.documents ?? null,
    ...data.variables,
  };
  return new jinja.Template(data.template).render(context);
}

function answer(data) {
  let loaded;
  try {
    loaded = load(data.package);
  } catch (err) {
    return JSON.stringify({ missing: String(err.message).split("\n")[0] });
  }
  const out = { version: loaded.version };
  try {
    out.prompt = render(loaded.jinja, data);
  } catch (err) {
    out.error = `${err.name}: ${err.message}`;
  }
  return JSON.stringify(out);
}

if (process.argv.includes("--lines")) {
  const lines = require("node:readline").createInterface({ input: process.stdin });
  lines.on("line", (line) => process.stdout.write(answer(JSON.parse(line)) + "\n"));
} else {
  const chunks = [];
  process.stdin.on("data", (chunk) => chunks.push(chunk));
  process.stdin.on("end", () => {
    process.stdout.write(answer(JSON.parse(Buffer.concat(chunks).toString("utf8"))));
  });
}
