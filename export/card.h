/* card: the Hugging Face dataset card of an export (README.md): YAML front matter (pretty_name,
 * license, task_categories, size_categories, tags, and configs with the data_files of each
 * split, so that datasets.load_dataset(DIR) finds the splits), then how to load the shards
 * (datasets, pandas, pyarrow, verl's Parquet) and the export's datasheet. */
#ifndef KC_EXPORT_CARD_H
#define KC_EXPORT_CARD_H
#include "common/strbuf.h"
#include "export/config.h"
#include "export/shards.h"

/* Writes the card into out: front matter, loading notes, then datasheet (the DATASHEET.md text). */
void export_card(const export_config *c, const export_shards *w, long records,
                 const char *datasheet, strbuf *out);

#endif
