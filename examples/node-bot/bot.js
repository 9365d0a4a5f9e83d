// node-bot: a minimal Love Letter bot in JavaScript (Node.js), speaking protocol version 1 over its
// standard streams (protocol: stdio). It answers the first legal answer to every "act" and "ok" to
// everything else, and exits after answering "shutdown". Node's standard library only.
//
// Run: node bot.js   (check it: arena check-bot --protocol stdio -- node examples/node-bot/bot.js)
const readline = require("readline");

function send(obj, then) {
  process.stdout.write(JSON.stringify(obj) + "\n", then);
}

const hello = { type: "hello", protocol: 1, name: "node-bot" };
if (process.env.ARENA_TOKEN !== undefined) hello.token = process.env.ARENA_TOKEN;
send(hello);

const input = readline.createInterface({ input: process.stdin });
input.on("line", (line) => {
  const message = JSON.parse(line);
  if (message.type === "act") send({ type: "action", index: 0 });
  else if (message.type === "shutdown") send({ type: "ok" }, () => process.exit(0)); // exit once written
  else send({ type: "ok" });
});
