// chatplate compare's `hf-jinja` engine: renders one chat template with @huggingface/jinja
// (the engine of transformers.js and the Hub), found by Node's own module resolution
// (NODE_PATH included). Reads one JSON object on stdin, writes one on stdout:
// {"prompt"} or {"error"}, with "version"; {"missing"} when the package is not found.
const fs = require("fs");
const path = require("path");

function packageVersion(entry) {
  for (let dir = path.dirname(entry); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const file = path.join(dir, "package.json");
    if (fs.existsSync(file)) {
      const meta = JSON.parse(fs.readFileSync(file, "utf8"));
      if (meta.name === "@huggingface/jinja") return meta.version;
    }
  }
  return "unknown";
}

// The engine's own strftime_now reads `new Date()` in local time: the fixed clock is made
// that Date, in UTC, so the naive clock prints as given.
function fixClock(clock) {
  process.env.TZ = "UTC";
  const RealDate = Date;
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

function render(jinja, data) {
  if (data.clock) fixClock(data.clock);
  const context = {
    messages: data.messages,
    add_generation_prompt: data.add_generation_prompt,
    ...data.variables,
  };
  if (data.tools != null) context.tools = data.tools;
  if (data.documents != null) context.documents = data.documents;
  return new jinja.Template(data.template).render(context);
}

const chunks = [];
process.stdin.on("data", (chunk) => chunks.push(chunk));
process.stdin.on("end", () => {
  let jinja, entry;
  try {
    entry = require.resolve("@huggingface/jinja");
    jinja = require(entry);
  } catch (err) {
    process.stdout.write(JSON.stringify({ missing: String(err.message).split("\n")[0] }));
    return;
  }
  const data = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  const out = { version: packageVersion(entry) };
  try {
    out.prompt = render(jinja, data);
  } catch (err) {
    out.error = `${err.name}: ${err.message}`;
  }
  process.stdout.write(JSON.stringify(out));
});
