import { z } from "zod";

export const TextBlock = z.object({ type: z.literal("text"), text: z.string() });
export type TextBlock = z.infer<typeof TextBlock>;

export const ImageBlock = z.object({
  type: z.literal("image"),
  source: z.discriminatedUnion("type", [
    z.object({
      type: z.literal("base64"),
      media_type: z.enum(["image/png", "image/jpeg", "image/gif", "image/webp"]),
      data: z.string(),
    }),
    z.object({ type: z.literal("url"), url: z.url() }),
  ]),
});
export type ImageBlock = z.infer<typeof ImageBlock>;

export const ContentBlock = z.discriminatedUnion("type", [TextBlock, ImageBlock]);
export type ContentBlock = z.infer<typeof ContentBlock>;

export const Content = z.array(ContentBlock);
export type Content = z.infer<typeof Content>;

export function textContent(text: string): Content {
  return [{ type: "text", text }];
}
