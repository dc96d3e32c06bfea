export { type FetchedPage, type FetchPageRequest, fetchPage } from "./fetch-page";
export { type ExtractMode, type ReadablePage, readablePage } from "./readable-page";
export {
  type SearchBackend,
  type SearchRequest,
  type SearchResult,
  SearxngResponse,
  searxngBackend,
} from "./search-backend";
export { WebError, type WebErrorCode } from "./web-error";
