export { type ScriptedModel, type ScriptedTurn, scriptedModel } from "./scripted-model";
