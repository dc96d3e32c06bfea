export { type ClientOptions, createClient, WakeloopApiError, type WakeloopClient } from "./client";
