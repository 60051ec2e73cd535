// @huggingface/jinja's side of scripts/bench_vs_transformers.py: compiles one chat template
// once, renders it ITERATIONS times, and prints {"seconds": median render, "prompt": the
// last output} as JSON. Usage: node scripts/bench_hf_jinja.js CASE.json ITERATIONS, with
// CASE.json {"template", "context"} and @huggingface/jinja where Node finds it (NODE_PATH,
// e.g. target/node/node_modules from scripts/fetch_hf_jinja.sh).
const fs = require("fs");
const { Template } = require("@huggingface/jinja");

const [file, iterations] = process.argv.slice(2);
const data = JSON.parse(fs.readFileSync(file, "utf8"));
const template = new Template(data.template);
const samples = [];
let prompt = "";
for (let i = 0; i < Number(iterations); i++) {
  const start = process.hrtime.bigint();
  prompt = template.render(data.context);
  samples.push(Number(process.hrtime.bigint() - start) / 1e9);
}
samples.sort((a, b) => a - b);
process.stdout.write(JSON.stringify({ seconds: samples[Math.floor(samples.length / 2)], prompt }));
