/* policy: source checks applied before compilation (see policy.h). A lexer that follows the
 * translation phases NVRTC (EDG, C++17) follows, measured against it
 * (tests/unit/test_verify_policy.c runs every case of its table through NVRTC as well):
 * - line splices: a backslash immediately followed by \n or \r\n joins lines anywhere,
 *   inside names, header names and comments (a backslash, blanks, newline does not);
 * - blanks are space, \t, \v, \f and \r (a lone \r is not a line end); other control bytes are
 *   tokens, not blanks;
 * - comments of both forms are blanks, also between '#' and the directive name; a newline
 *   inside a block comment starts a new line for directives (NVRTC treats the '#' after it as
 *   a directive even after code);
 * - string and character literals with escapes; raw string literals R"d(...)d" (with the
 *   prefixes L, u, U, u8), whose bodies hide nothing and show nothing;
 * - pp-numbers with digit separators (1'000'000 opens no character literal);
 * - digraph %: and trigraphs ??= ??/ are refused in code (NVRTC's C++17 mode has no
 *   trigraphs, so this is only a second guard).
 * Beyond #include <allowed>, it refuses #include_next, #import, #embed, __has_include and
 * __has_include_next anywhere in code, and token pasting (##) in a source that also has
 * #if or #elif (pasting can form __has_include there, as NVRTC confirms). */
#include "verify/service/policy.h"
#include "common/allowed_headers.h"
#include "common/error.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#define HEADER_ITEM(name) name,
const char *const policy_allowed_includes[] = {KC_ALLOWED_HEADERS(HEADER_ITEM) NULL};

struct lexer {
    const char *s;
    size_t n, i;
    int at_line_start; /* no token yet on this line: a '#' here opens a directive */
    int has_if;        /* a #if or #elif directive was seen */
    size_t paste_at;   /* offset of the first ## (n when none) */
    strbuf *err;
};

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r'; }
static int is_ident_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
}
static int is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }
static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Length of a line splice at offset i (0 when none). */
static size_t splice_len(const struct lexer *lx, size_t i)
{
    if (i + 1 < lx->n && lx->s[i] == '\\' && lx->s[i + 1] == '\n')
        return 2;
    if (i + 2 < lx->n && lx->s[i] == '\\' && lx->s[i + 1] == '\r' && lx->s[i + 2] == '\n')
        return 3;
    return 0;
}

/* Offset of the next character at or after i, splices skipped. */
static size_t skip_splices(const struct lexer *lx, size_t i)
{
    size_t k;
    while ((k = splice_len(lx, i)) != 0)
        i += k;
    return i;
}

static char cur(struct lexer *lx)
{
    lx->i = skip_splices(lx, lx->i);
    return lx->i < lx->n ? lx->s[lx->i] : '\0';
}

/* The character after the current one (splices skipped), without moving. */
static char peek(struct lexer *lx)
{
    size_t j = skip_splices(lx, skip_splices(lx, lx->i) + 1);
    return j < lx->n ? lx->s[j] : '\0';
}

static void advance(struct lexer *lx)
{
    lx->i = skip_splices(lx, lx->i);
    if (lx->i < lx->n)
        lx->i++;
}

static int line_of(const struct lexer *lx, size_t at)
{
    int line = 1;
    for (size_t i = 0; i < at && i < lx->n; i++)
        line += lx->s[i] == '\n';
    return line;
}

static int refuse(struct lexer *lx, size_t at, const char *why, const char *arg)
{
    strbuf m = STRBUF_INIT;
    sb_addf(&m, why, arg);
    kc_fail(lx->err, "line %d: %s", line_of(lx, at), m.buf);
    sb_free(&m);
    return -1;
}

/* At "/ *": skips the comment; a newline inside starts a new line for directives. */
static int skip_block_comment(struct lexer *lx)
{
    size_t start = lx->i;
    advance(lx), advance(lx);
    for (;;) {
        char c = cur(lx);
        if (!c && lx->i >= lx->n)
            return refuse(lx, start, "%sunterminated /* comment", "");
        if (c == '*' && peek(lx) == '/') {
            advance(lx), advance(lx);
            return 0;
        }
        if (c == '\n')
            lx->at_line_start = 1;
        advance(lx);
    }
}

static void skip_line_comment(struct lexer *lx)
{
    while (lx->i < lx->n && cur(lx) != '\n')
        advance(lx);
}

/* Skips blanks and comments; returns 1 when a line comment or newline ends the line. */
static int skip_blanks(struct lexer *lx, int *rc)
{
    for (;;) {
        char c = cur(lx);
        if (is_blank(c)) {
            advance(lx);
        } else if (c == '/' && peek(lx) == '*') {
            if ((*rc = skip_block_comment(lx)) != 0)
                return 1;
        } else if (c == '/' && peek(lx) == '/') {
            skip_line_comment(lx);
            return 1;
        } else {
            return c == '\n' || lx->i >= lx->n;
        }
    }
}

/* Reads an identifier (splices joined) into out. */
static void read_ident(struct lexer *lx, strbuf *out)
{
    sb_reset(out);
    while (is_ident_char(cur(lx)) && lx->i < lx->n) {
        sb_addch(out, cur(lx));
        advance(lx);
    }
}

/* At the opening quote of "..." or '...'. */
static void skip_quoted(struct lexer *lx)
{
    char q = cur(lx);
    advance(lx);
    for (;;) {
        char c = cur(lx);
        if (lx->i >= lx->n || c == '\n')
            return; /* unterminated: NVRTC reports it; the line ends here for both */
        advance(lx);
        if (c == q)
            return;
        if (c == '\\')
            advance(lx);
    }
}

/* At the '"' of a raw string literal: R"delim( ... )delim". The body is raw text, so it is
 * read without splicing; a splice in it would be read differently by a compiler that does not
 * revert it, so it is refused. */
static int skip_raw_string(struct lexer *lx)
{
    size_t start = lx->i, d = lx->i + 1, k = 0;
    while (d + k < lx->n && lx->s[d + k] != '(') {
        char c = lx->s[d + k];
        if (k == 16 || c == ' ' || c == ')' || c == '\\' || c == '"' || (unsigned char)c < 32)
            return refuse(lx, start, "%smalformed raw string literal delimiter", "");
        k++;
    }
    if (d + k >= lx->n)
        return refuse(lx, start, "%sunterminated raw string literal", "");
    for (size_t i = d + k + 1; i < lx->n; i++) {
        if (splice_len(lx, i))
            return refuse(lx, i, "%sa line continuation inside a raw string literal", "");
        if (lx->s[i] == ')' && i + k + 1 < lx->n && memcmp(lx->s + i + 1, lx->s + d, k) == 0 &&
            lx->s[i + k + 1] == '"') {
            lx->i = i + k + 2;
            return 0;
        }
    }
    return refuse(lx, start, "%sunterminated raw string literal", "");
}

/* At the first character of a pp-number: digits, letters, '_', '.', digit separators
 * ('x), exponent signs. */
static void skip_pp_number(struct lexer *lx)
{
    for (;;) {
        char c = cur(lx), nx = peek(lx);
        if ((c == 'e' || c == 'E' || c == 'p' || c == 'P') && (nx == '+' || nx == '-')) {
            advance(lx), advance(lx);
        } else if (c == '\'' && is_ident_char(nx)) {
            advance(lx), advance(lx);
        } else if (is_ident_char(c) || c == '.') {
            advance(lx);
        } else {
            return;
        }
    }
}

static int is_allowed(const char *name)
{
    for (int i = 0; policy_allowed_includes[i]; i++)
        if (strcmp(policy_allowed_includes[i], name) == 0)
            return 1;
    return 0;
}

/* After "include": the header name must be literal and allowed. */
static int check_include(struct lexer *lx, size_t at)
{
    int rc = 0;
    if (skip_blanks(lx, &rc))
        return rc ? rc
                  : refuse(lx, at, "%s#include must name a header literally, as #include <cuda_fp16.h>", "");
    char open = cur(lx), close = open == '<' ? '>' : open == '"' ? '"' : 0;
    if (!close)
        return refuse(lx, at, "%s#include must name a header literally, as #include <cuda_fp16.h>", "");
    advance(lx);
    strbuf name = STRBUF_INIT;
    for (;;) {
        char c = cur(lx);
        if (lx->i >= lx->n || c == '\n') {
            sb_free(&name);
            return refuse(lx, at, "%sunterminated #include", "");
        }
        advance(lx);
        if (c == close)
            break;
        sb_addch(&name, c);
    }
    if (!is_allowed(name.buf ? name.buf : "")) {
        strbuf shown = STRBUF_INIT;
        sb_addf(&shown, "%c%s%c", open, name.buf ? name.buf : "", close);
        rc = refuse(lx, at, "#include %s is not allowed (the prompt lists the available headers)",
                    shown.buf);
        sb_free(&shown);
    }
    sb_free(&name);
    return rc;
}

/* At '#' (or %:) that starts a line. */
static int check_directive(struct lexer *lx, size_t at)
{
    int rc = 0;
    lx->at_line_start = 0;
    if (skip_blanks(lx, &rc))
        return rc; /* null directive */
    lx->at_line_start = 0;
    strbuf name = STRBUF_INIT;
    read_ident(lx, &name);
    const char *d = name.buf ? name.buf : "";
    if (strcmp(d, "include") == 0)
        rc = check_include(lx, at);
    else if (strcmp(d, "include_next") == 0 || strcmp(d, "import") == 0 || strcmp(d, "embed") == 0)
        rc = refuse(lx, at, "#%s is not allowed", d);
    else if (strcmp(d, "if") == 0 || strcmp(d, "elif") == 0)
        lx->has_if = 1;
    sb_free(&name);
    return rc;
}

static int check_identifier(struct lexer *lx)
{
    size_t at = lx->i;
    strbuf id = STRBUF_INIT;
    read_ident(lx, &id);
    const char *s = id.buf;
    int rc = 0;
    if (strcmp(s, "__has_include") == 0 || strcmp(s, "__has_include_next") == 0)
        rc = refuse(lx, at, "%s probes are not allowed", s);
    else if (cur(lx) == '"' && (strcmp(s, "R") == 0 || strcmp(s, "LR") == 0 ||
                                strcmp(s, "uR") == 0 || strcmp(s, "UR") == 0 ||
                                strcmp(s, "u8R") == 0))
        rc = skip_raw_string(lx);
    sb_free(&id);
    return rc;
}

/* One token or blank of code. */
static int lex_one(struct lexer *lx)
{
    size_t at = lx->i;
    char c = cur(lx), nx = peek(lx);
    if (c == '\n') {
        lx->at_line_start = 1;
        advance(lx);
        return 0;
    }
    if (is_blank(c)) {
        advance(lx);
        return 0;
    }
    if (c == '/' && nx == '*')
        return skip_block_comment(lx);
    if (c == '/' && nx == '/') {
        skip_line_comment(lx);
        return 0;
    }
    int line_start = lx->at_line_start;
    lx->at_line_start = 0;
    if (c == '%' && nx == ':')
        return refuse(lx, at, "%sdigraph preprocessor forms (%%:) are not allowed", "");
    if (c == '?' && nx == '?') {
        size_t j = skip_splices(lx, skip_splices(lx, lx->i + 1) + 1);
        if (j < lx->n && (lx->s[j] == '=' || lx->s[j] == '/'))
            return refuse(lx, at, "%strigraphs are not allowed", "");
    }
    if (c == '#') {
        advance(lx);
        if (line_start)
            return check_directive(lx, at);
        if (cur(lx) == '#' && lx->paste_at == lx->n)
            lx->paste_at = at;
        return 0;
    }
    if (c == '"' || c == '\'') {
        skip_quoted(lx);
        return 0;
    }
    if (is_digit(c) || (c == '.' && is_digit(nx))) {
        skip_pp_number(lx);
        return 0;
    }
    if (is_ident_start(c))
        return check_identifier(lx);
    advance(lx);
    return 0;
}

int policy_check(const char *source, strbuf *err)
{
    size_t len = strnlen(source, KC_MAX_SOURCE_BYTES + 1);
    if (len > KC_MAX_SOURCE_BYTES)
        return kc_fail(err, "the source is longer than %d bytes (the limit)", KC_MAX_SOURCE_BYTES);
    struct lexer lx = {.s = source, .n = len, .at_line_start = 1, .paste_at = len, .err = err};
    while (lx.i < lx.n)
        if (lex_one(&lx))
            return -1;
    if (lx.has_if && lx.paste_at < lx.n)
        return refuse(&lx, lx.paste_at,
                      "%stoken pasting (##) cannot be used in a source with #if or #elif (it can "
                      "form __has_include)", "");
    return 0;
}

/* ---- the compiled module ---- */

static const char *const heap_symbols[] = {"malloc", "free", "__nv_aligned_device_malloc", NULL};

static int in_bounds(size_t len, uint64_t off, uint64_t size)
{
    return off <= len && size <= len - off;
}

/* The section header i of an ELF64 image, or NULL when it lies outside. */
static const Elf64_Shdr *section(const unsigned char *img, size_t len, const Elf64_Ehdr *eh, int i)
{
    uint64_t off = eh->e_shoff + (uint64_t)i * sizeof(Elf64_Shdr);
    return in_bounds(len, off, sizeof(Elf64_Shdr)) ? (const Elf64_Shdr *)(img + off) : NULL;
}

/* The name of an undefined symbol of the heap's, or NULL. */
static const char *heap_symbol_in(const unsigned char *img, size_t len, const Elf64_Shdr *sym,
                                  const Elf64_Shdr *str)
{
    if (!in_bounds(len, sym->sh_offset, sym->sh_size) || !in_bounds(len, str->sh_offset, str->sh_size))
        return NULL;
    const char *names = (const char *)img + str->sh_offset;
    for (uint64_t k = 0; k + 1 <= sym->sh_size / sizeof(Elf64_Sym); k++) {
        Elf64_Sym e;
        memcpy(&e, img + sym->sh_offset + k * sizeof(Elf64_Sym), sizeof(e));
        if (e.st_shndx != SHN_UNDEF || e.st_name >= str->sh_size)
            continue;
        const char *name = names + e.st_name;
        if (!memchr(name, 0, str->sh_size - e.st_name))
            continue;
        for (int h = 0; heap_symbols[h]; h++)
            if (strcmp(name, heap_symbols[h]) == 0)
                return heap_symbols[h];
    }
    return NULL;
}

int policy_check_module(const void *cubin, size_t len, strbuf *err)
{
    const unsigned char *img = cubin;
    Elf64_Ehdr eh;
    if (len < sizeof(eh) || memcmp(img, ELFMAG, SELFMAG) || img[EI_CLASS] != ELFCLASS64)
        return kc_fail(err, "the compiled module is not an ELF64 cubin");
    memcpy(&eh, img, sizeof(eh));
    for (int i = 0; i < eh.e_shnum; i++) {
        const Elf64_Shdr *sh = section(img, len, &eh, i), *str;
        if (!sh)
            return kc_fail(err, "the compiled module's section table is truncated");
        if (sh->sh_type != SHT_SYMTAB || !(str = section(img, len, &eh, (int)sh->sh_link)))
            continue;
        const char *name = heap_symbol_in(img, len, sh, str);
        if (name)
            return kc_fail(err, "the kernel uses the device heap (%s; also through new or delete): "
                                "device malloc is not allowed, since the heap outlives a "
                                "verification; use a @scratch buffer instead", name);
    }
    return 0;
}

/* The name of section sh (from the section-name table shstr), or NULL when it lies outside. */
static const char *section_name(const unsigned char *img, size_t len, const Elf64_Shdr *shstr,
                                const Elf64_Shdr *sh)
{
    if (!in_bounds(len, shstr->sh_offset, shstr->sh_size) || sh->sh_name >= shstr->sh_size)
        return NULL;
    const char *name = (const char *)img + shstr->sh_offset + sh->sh_name;
    return memchr(name, 0, shstr->sh_size - sh->sh_name) ? name : NULL;
}

int policy_module_keeps_state(const void *cubin, size_t len)
{
    const unsigned char *img = cubin;
    Elf64_Ehdr eh;
    if (len < sizeof(eh) || memcmp(img, ELFMAG, SELFMAG) || img[EI_CLASS] != ELFCLASS64)
        return 1;
    memcpy(&eh, img, sizeof(eh));
    const Elf64_Shdr *shstr = section(img, len, &eh, eh.e_shstrndx);
    if (!shstr)
        return 1;
    for (int i = 0; i < eh.e_shnum; i++) {
        const Elf64_Shdr *sh = section(img, len, &eh, i);
        const char *name = sh ? section_name(img, len, shstr, sh) : NULL;
        if (!name || strncmp(name, ".nv.global", 10) == 0)
            return 1;
    }
    return 0;
}
