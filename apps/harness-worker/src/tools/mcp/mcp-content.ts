import { type Content, type ContentBlock, exceedsJsonDepth, jsonDepthMessage } from "@wakeloop/contracts";

const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
type ImageMediaType = "image/png" | "image/jpeg" | "image/gif" | "image/webp";

/** One block of an MCP tool result, as the SDK parsed it (only the fields read here). */
export interface McpBlock {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  uri?: string;
  name?: string;
  resource?: { uri?: string; text?: string; mimeType?: string };
}

/**
 * An MCP tool result as content the model can read: text and the image types every provider takes pass
 * through; other blocks (audio, other images, resource links, embedded resources) become a text line
 * saying what they were, so nothing the server returned silently disappears. `structuredContent`
 * without blocks is shown as JSON (servers should send both; some send only the structure).
 */
export function mcpResultContent(blocks: readonly McpBlock[], structured?: unknown): Content {
  const content: Content = blocks.map(toBlock);
  if (content.length === 0 && structured !== undefined) {
    // A server is tenant-chosen: JSON.stringify throws past a few thousand levels.
    const text = exceedsJsonDepth(structured)
      ? `[structured content left out: ${jsonDepthMessage("it")}]`
      : JSON.stringify(structured);
    content.push({ type: "text", text });
  }
  return content.length > 0 ? content : [{ type: "text", text: "(the tool returned no content)" }];
}

function toBlock(block: McpBlock): ContentBlock {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text ?? "" };
    case "image":
      if (block.data !== undefined && block.mimeType !== undefined && IMAGE_TYPES.has(block.mimeType)) {
        return {
          type: "image",
          source: { type: "base64", media_type: block.mimeType as ImageMediaType, data: block.data },
        };
      }
      return { type: "text", text: `[image of type ${block.mimeType ?? "unknown"} left out]` };
    case "resource_link":
      return { type: "text", text: `[resource ${block.name ?? ""} ${block.uri ?? ""}]`.replace("  ", " ") };
    case "resource":
      return block.resource?.text !== undefined
        ? { type: "text", text: block.resource.text }
        : { type: "text", text: `[binary resource ${block.resource?.uri ?? ""} left out]` };
    default:
      return { type: "text", text: `[${block.type} content left out]` };
  }
}
