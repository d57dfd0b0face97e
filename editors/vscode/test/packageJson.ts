/** The extension's package.json and the defaults it declares, keyed relative to `repomem.`. */
import * as fs from "node:fs";
import * as path from "node:path";

interface Property {
  default?: unknown;
}

export const packageJson = JSON.parse(
  fs.readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8"),
) as { contributes: { configuration: { properties: Record<string, Property> } } };

export const declaredDefaults: Record<string, unknown> = Object.fromEntries(
  Object.entries(packageJson.contributes.configuration.properties).map(([name, property]) => [
    name.slice("repomem.".length),
    property.default,
  ]),
);
