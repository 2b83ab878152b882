/* json_schema: a small JSON Schema (draft 2020-12) validator for the subset kcorpus's schemas use,
 * so the tests can check every exported record against schemas/record.schema.json and every
 * problem manifest against schemas/problem.schema.json.
 * Keywords: $ref (local "#/..." pointers), type, enum, const, required, properties,
 * additionalProperties, items, minItems, maxItems, minLength, maxLength, minimum, maximum,
 * exclusiveMinimum, exclusiveMaximum, oneOf, anyOf, allOf, pattern (POSIX extended regular
 * expressions), propertyNames, minProperties, dependentRequired, uniqueItems, not,
 * if/then/else, and boolean schemas. Annotations ($schema, $id, $defs, title,
 * description, $comment) are ignored; any other keyword is an error, so a schema never passes
 * a record by using something the validator does not check. */
#ifndef KC_TEST_JSON_SCHEMA_H
#define KC_TEST_JSON_SCHEMA_H
#include "common/strbuf.h"
#include <jansson.h>

/* Loads a schema file; NULL (and a message in err) when it cannot be read or parsed. */
json_t *json_schema_load(const char *path, strbuf *err);

/* 0 when instance is valid against schema (whose "#/..." references resolve in schema itself);
 * otherwise -1 with err set to "<path in the instance>: <what is wrong>", e.g.
 * "$.provenance.verification.verdict: not one of the values of the enum". */
int json_schema_validate(const json_t *schema, const json_t *instance, strbuf *err);

#endif
