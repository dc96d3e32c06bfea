import { describe, expect, it } from "vitest";
import { recallQuery } from "./recall";

describe("recallQuery", () => {
  it("matches any word of the input, once each, lower-cased", () => {
    expect(recallQuery("How do I rotate the Staging DB password? staging!")).toBe(
      "how or rotate or the or staging or password",
    );
  });

  it("keeps identifiers and non-Latin words, and drops the websearch operator", () => {
    expect(recallQuery("deploy_key or -x überprüfen")).toBe("deploy_key or überprüfen");
  });

  it("bounds the query to 32 words and has none for input without words", () => {
    const long = Array.from({ length: 100 }, (_, index) => `word${index}`).join(" ");
    expect(recallQuery(long)?.split(" or ")).toHaveLength(32);
    expect(recallQuery("ok ?! -- 1")).toBeNull();
  });
});
