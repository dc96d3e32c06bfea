import { z } from "zod";

/**
 * Structured UI a client renders (personal-agent reference, UI Rendering): the block kinds of
 * `render_blocks`, each with bounded sizes so one call cannot hand a client an unbounded document.
 */

/** Every block list serialized stays under this; the per-field bounds alone do not bound `json` data. */
export const MAX_UI_BLOCKS_CHARS = 200_000;

const Label = z.string().min(1).max(200);
const Scalar = z.union([z.string().max(10_000), z.number(), z.boolean(), z.null()]);

export const MarkdownUiBlock = z.object({
  type: z.literal("markdown"),
  content: z.string().min(1).max(20_000),
});
export const TableUiBlock = z.object({
  type: z.literal("table"),
  columns: z
    .array(z.object({ key: z.string().min(1).max(100), label: Label }))
    .min(1)
    .max(50),
  data: z
    .array(z.record(z.string().max(100), Scalar))
    .max(1_000)
    .describe("Rows keyed by column key"),
});
export const ChartUiBlock = z.object({
  type: z.literal("chart"),
  chartType: z.enum(["line", "bar", "pie", "area"]),
  data: z
    .record(z.string().max(100), z.unknown())
    .describe("Series and labels, as the client's chart takes them"),
});
export const FormField = z.object({
  name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, "a field name like start_date"),
  label: Label,
  type: z.enum(["text", "number", "select", "checkbox", "textarea", "date"]),
  options: z.array(z.string().min(1).max(200)).min(1).max(100).optional().describe("Choices of a select"),
  required: z.boolean().optional(),
  default: Scalar.optional(),
});
export type FormField = z.infer<typeof FormField>;
export const FormUiBlock = z.object({
  type: z.literal("form"),
  fields: z.array(FormField).min(1).max(50),
  submitLabel: z.string().min(1).max(100),
});
export const CodeUiBlock = z.object({
  type: z.literal("code"),
  language: z.string().min(1).max(50),
  content: z.string().max(50_000),
});
export const ImageUiBlock = z.object({
  type: z.literal("image"),
  url: z.url({ protocol: /^https?$/ }).max(2_000),
  alt: z.string().max(500).optional(),
});
export const AlertUiBlock = z.object({
  type: z.literal("alert"),
  variant: z.enum(["info", "warning", "danger", "success"]),
  content: z.string().min(1).max(4_000),
});
export const JsonUiBlock = z.object({ type: z.literal("json"), data: z.unknown() });
/**
 * A React component the agent stored with create_ui_component, by name. In `agent.ui_blocks` the
 * platform has set `version` to the one it resolved; a client loads that version's code with
 * `GET /v1/agents/{agent_id}/ui_components/{name}?version=` and renders it with `props`.
 */
export const ComponentUiBlock = z.object({
  type: z.literal("component"),
  component: z.string().regex(/^[a-z][a-z0-9_]{0,47}$/, "a stored component's snake_case name"),
  version: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("A stored version to show; the current one when absent"),
  props: z.record(z.string().max(100), z.unknown()).optional().describe("Props passed to the component"),
});
export type ComponentUiBlock = z.infer<typeof ComponentUiBlock>;

export const UiBlock = z.discriminatedUnion("type", [
  MarkdownUiBlock,
  TableUiBlock,
  ChartUiBlock,
  FormUiBlock,
  CodeUiBlock,
  ImageUiBlock,
  AlertUiBlock,
  JsonUiBlock,
  ComponentUiBlock,
]);
export type UiBlock = z.infer<typeof UiBlock>;

export const UiBlocks = z
  .array(UiBlock)
  .min(1)
  .max(50)
  .refine((blocks) => JSON.stringify(blocks).length <= MAX_UI_BLOCKS_CHARS, {
    message: `the blocks together must stay under ${MAX_UI_BLOCKS_CHARS} characters of JSON`,
  });
export type UiBlocks = z.infer<typeof UiBlocks>;

export const UiTitle = z.string().min(1).max(200).describe("Shown above the blocks");

/** `send_message`, `render_blocks` and `render_and_wait` inputs: validated in the worker and the planner. */
export const SendMessageInput = z.object({
  text: z.string().min(1).max(20_000).describe("Message text (markdown)"),
});
export type SendMessageInput = z.infer<typeof SendMessageInput>;

export const RenderBlocksInput = z.object({ blocks: UiBlocks, title: UiTitle.optional() });
export type RenderBlocksInput = z.infer<typeof RenderBlocksInput>;

/** Inline component code a client renders (the same bound as a stored component's). */
export const MAX_INLINE_COMPONENT_CHARS = 64_000;

/**
 * `render_and_wait`: the reference's `component` (a stored component's name) or inline `code` (an ES
 * module with JSX whose default export is the component), with `props` and `title`; or, beyond the
 * reference, pre-built `blocks` (e.g. a form). Exactly one of `component`, `code` and `blocks`.
 */
export const RenderAndWaitInput = z
  .object({
    component: ComponentUiBlock.shape.component
      .optional()
      .describe("Name of a stored component (create_ui_component)"),
    code: z
      .string()
      .min(1)
      .max(MAX_INLINE_COMPONENT_CHARS)
      .optional()
      .describe("Inline JSX/React code, used when component is not given: export default the component"),
    props: ComponentUiBlock.shape.props,
    blocks: UiBlocks.optional().describe("Pre-built blocks (e.g. a form) instead of a component"),
    title: UiTitle.optional(),
  })
  .refine(
    (input) => [input.component, input.code, input.blocks].filter((part) => part !== undefined).length === 1,
    { message: "give exactly one of component, code or blocks" },
  )
  .refine((input) => input.props === undefined || input.blocks === undefined, {
    message: "props go with component or code, not with blocks",
  });
export type RenderAndWaitInput = z.infer<typeof RenderAndWaitInput>;
