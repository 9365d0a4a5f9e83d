/*
 * c-bot: a minimal Love Letter bot in C, speaking protocol version 1 over ZeroMQ.
 *
 * It connects a REQ socket to $ARENA_ENDPOINT, says hello with $ARENA_TOKEN, then answers
 * every message in lockstep: {"type": "action", "index": 0} to an "act" (the first legal
 * answer is always legal), {"type": "ok"} to anything else, and exits after answering
 * "shutdown". It parses no JSON beyond finding the message's top-level "type".
 *
 * Build: cc -O2 -Wall -Wextra -o bot bot.c -lzmq   (Debian/Ubuntu: apt-get install libzmq3-dev)
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#define MAX_MESSAGE (64 * 1024) /* the protocol's size cap for one message */
#define MAX_TYPE 32             /* longer "type" values are none we answer specially */

static void die(const char *what)
{
    fprintf(stderr, "c-bot: %s: %s\n", what, zmq_strerror(zmq_errno()));
    exit(1);
}

static void die_plain(const char *what)
{
    fprintf(stderr, "c-bot: %s\n", what);
    exit(1);
}

/* ---- a tiny, careful scanner: the value of the top-level "type" key ------------------------ */

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/*
 * Reads the JSON string whose opening quote is at p. Decodes it into out (at most size - 1
 * bytes, NUL-terminated; *fits is set to 0 when it was longer, or held a non-ASCII \u escape,
 * which no name this bot compares against does). Returns the position after the closing quote,
 * or NULL when the string is not terminated or has a bad escape.
 */
static const char *read_string(const char *p, char *out, size_t size, int *fits)
{
    size_t n = 0;
    *fits = 1;
    p++; /* the opening quote */
    for (;;) {
        char c = *p++;
        if (c == '\0')
            return NULL;
        if (c == '"')
            break;
        if (c == '\\') {
            char e = *p++;
            switch (e) {
            case '"': c = '"'; break;
            case '\\': c = '\\'; break;
            case '/': c = '/'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            case 'u': {
                int code = 0;
                for (int i = 0; i < 4; i++) {
                    int d = hex_digit(*p++);
                    if (d < 0)
                        return NULL;
                    code = code * 16 + d;
                }
                if (code == 0 || code >= 0x80) {
                    *fits = 0; /* kept out of the decoded text: not a name we know */
                    continue;
                }
                c = (char)code;
                break;
            }
            default:
                return NULL;
            }
        }
        if (n + 1 < size)
            out[n++] = c;
        else
            *fits = 0;
    }
    out[n] = '\0';
    return p;
}

/*
 * Copies the value of the "type" key of the top-level object in text into type (empty when
 * there is none, or when it is not a string). Only keys at nesting depth 1 count: "type"
 * inside nested objects (the events), inside arrays or inside string values is skipped.
 * Key order is not relied on.
 */
static void find_type(const char *text, char *type, size_t size)
{
    const char *p = skip_ws(text);
    int depth = 0;
    type[0] = '\0';
    if (*p != '{')
        return;
    while (*p) {
        char c = *p;
        if (c == '"') {
            char key[8];
            int fits;
            const char *after = read_string(p, key, sizeof key, &fits);
            if (after == NULL)
                return; /* broken JSON: no type */
            p = after;
            if (depth != 1)
                continue;
            const char *colon = skip_ws(p);
            if (*colon != ':')
                continue; /* a string value, not a key */
            p = colon + 1;
            if (!fits || strcmp(key, "type") != 0)
                continue;
            const char *value = skip_ws(p);
            if (*value != '"')
                return; /* "type" is not a string */
            if (read_string(value, type, size, &fits) == NULL || !fits)
                type[0] = '\0'; /* broken, or too long to be a type this bot knows */
            return;
        }
        if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            depth--;
            if (depth == 0)
                return; /* the end of the top-level object */
        }
        p++;
    }
}

/* ---- messages ------------------------------------------------------------------------------ */

static void send_text(void *socket, const char *text)
{
    while (zmq_send(socket, text, strlen(text), 0) == -1) {
        if (zmq_errno() != EINTR)
            die("zmq_send");
    }
}

/* Receives one message into buf (at most MAX_MESSAGE bytes, NUL-terminated). */
static void receive(void *socket, char *buf)
{
    int size;
    while ((size = zmq_recv(socket, buf, MAX_MESSAGE, 0)) == -1) {
        if (zmq_errno() != EINTR)
            die("zmq_recv");
    }
    if (size > MAX_MESSAGE) {
        fprintf(stderr, "c-bot: a message of %d bytes, only the first %d read\n", size, MAX_MESSAGE);
        size = MAX_MESSAGE;
    }
    buf[size] = '\0';

    /* The arena sends one frame per message; should there be more, they are read and ignored
       (a REQ socket only sends once the whole message has been received). */
    for (;;) {
        int more = 0;
        size_t more_size = sizeof more;
        if (zmq_getsockopt(socket, ZMQ_RCVMORE, &more, &more_size) == -1)
            die("zmq_getsockopt(ZMQ_RCVMORE)");
        if (!more)
            break;
        char scratch[256];
        while (zmq_recv(socket, scratch, sizeof scratch, 0) == -1) {
            if (zmq_errno() != EINTR)
                die("zmq_recv");
        }
    }
}

/* The hello message, with the token written as a JSON string (escaped, whatever it holds). */
static char *hello_message(const char *token)
{
    static const char head[] = "{\"type\": \"hello\", \"protocol\": 1, \"name\": \"c-bot\", \"token\": \"";
    static const char tail[] = "\"}";
    size_t length = strlen(token);
    char *out = malloc(sizeof head + 6 * length + sizeof tail);
    if (out == NULL)
        die_plain("out of memory");
    char *q = out;
    memcpy(q, head, sizeof head - 1);
    q += sizeof head - 1;
    for (const unsigned char *t = (const unsigned char *)token; *t; t++) {
        if (*t == '"' || *t == '\\') {
            *q++ = '\\';
            *q++ = (char)*t;
        } else if (*t < 0x20 || *t == 0x7f) {
            q += sprintf(q, "\\u%04x", *t);
        } else {
            *q++ = (char)*t; /* UTF-8 bytes pass through as they are */
        }
    }
    memcpy(q, tail, sizeof tail); /* with its NUL */
    return out;
}

int main(void)
{
    const char *endpoint = getenv("ARENA_ENDPOINT");
    const char *token = getenv("ARENA_TOKEN");
    if (endpoint == NULL || *endpoint == '\0')
        die_plain("ARENA_ENDPOINT is not set (this bot is started by the arena)");
    if (token == NULL)
        die_plain("ARENA_TOKEN is not set (this bot is started by the arena)");

    void *context = zmq_ctx_new();
    if (context == NULL)
        die("zmq_ctx_new");
    void *socket = zmq_socket(context, ZMQ_REQ);
    if (socket == NULL)
        die("zmq_socket");
    int linger = 1000; /* at exit, up to 1 s to deliver the last reply, never a hang */
    if (zmq_setsockopt(socket, ZMQ_LINGER, &linger, sizeof linger) == -1)
        die("zmq_setsockopt(ZMQ_LINGER)");
    if (zmq_connect(socket, endpoint) == -1)
        die("zmq_connect");

    char *hello = hello_message(token);
    send_text(socket, hello);
    free(hello);

    char *buf = malloc(MAX_MESSAGE + 1);
    if (buf == NULL)
        die_plain("out of memory");
    long acts = 0;
    for (;;) {
        char type[MAX_TYPE];
        receive(socket, buf);
        find_type(buf, type, sizeof type);
        if (strcmp(type, "act") == 0) {
            send_text(socket, "{\"type\": \"action\", \"index\": 0}");
            acts++;
        } else {
            send_text(socket, "{\"type\": \"ok\"}");
        }
        if (strcmp(type, "shutdown") == 0)
            break;
    }
    free(buf);
    fprintf(stderr, "c-bot: shutdown after %ld decisions\n", acts);

    if (zmq_close(socket) == -1)
        die("zmq_close");
    while (zmq_ctx_term(context) == -1) {
        if (zmq_errno() != EINTR)
            die("zmq_ctx_term");
    }
    return 0;
}
