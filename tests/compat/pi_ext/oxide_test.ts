import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.registerCommand("oxide-branch", {
    description: "move the leaf to an entry, optionally with a summary (test helper)",
    handler: async (args, ctx) => {
      await ctx.waitForIdle();
      const [id, summarize] = args.trim().split(/\s+/);
      const r = await ctx.navigateTree(id, { summarize: summarize === "summarize" });
      console.error("navigated", JSON.stringify(r));
    },
  });
  pi.registerCommand("oxide-label", {
    description: "label an entry",
    handler: async (args, ctx) => { const [id, label] = args.trim().split(/\s+/); pi.setLabel(id, label); },
  });
  pi.registerCommand("oxide-custom", {
    description: "extension state and an injected message",
    handler: async (args, ctx) => {
      pi.appendEntry("oxide-test", { count: 42 });
      pi.sendMessage({ customType: "oxide-test", content: "INJECTED context from an extension", display: true, details: { why: "test" } }, { deliverAs: "nextTurn" });
    },
  });
}
