/* curve.c: CURVE key files and socket options (see curve.h). */
#include "wire/curve.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "support/atomic_file.h"

bool xq_curve_available(void) { return zmq_has("curve") != 0; }

static bool z85_key_valid(const char *k) {
  uint8_t bin[32];
  return strlen(k) == XQ_Z85_KEY_LEN && zmq_z85_decode(bin, k) != NULL;
}

static int write_key_file(const char *path, const char *key, mode_t mode, bool force,
                          xq_errbuf_t *eb) {
  int flags = O_WRONLY | O_CREAT | (force ? O_TRUNC : O_EXCL);
  int fd = open(path, flags, mode);
  if (fd < 0)
    return xq_err_set(eb, XQ_EIO, "%s: %s%s", path, strerror(errno),
                      errno == EEXIST ? " (use --force to replace it)" : "");
  char line[XQ_Z85_KEY_LEN + 2];
  snprintf(line, sizeof line, "%s\n", key);
  size_t n = strlen(line);
  bool ok = write(fd, line, n) == (ssize_t)n && fchmod(fd, mode) == 0 && fsync(fd) == 0;
  int e = errno;
  close(fd);
  if (!ok) return xq_err_set(eb, XQ_EIO, "%s: %s", path, strerror(e));
  return 0;
}

int xq_curve_keygen(const char *dir, const char *name, bool force, char public_out[41],
                    xq_errbuf_t *eb) {
  if (!xq_curve_available())
    return xq_err_set(eb, XQ_EINVAL, "this libzmq was built without CURVE (libsodium)");
  if (!name[0] || strchr(name, '/'))
    return xq_err_set(eb, XQ_EINVAL, "key name '%s' must be non-empty without '/'", name);
  char pub[41], sec[41], sec_path[1024], pub_path[1024];
  snprintf(sec_path, sizeof sec_path, "%s/%s.secret", dir, name);
  snprintf(pub_path, sizeof pub_path, "%s/%s.pub", dir, name);
  /* Check both names first so a refusal never leaves half of a new pair behind. */
  const char *paths[2] = {sec_path, pub_path};
  for (int i = 0; i < 2 && !force; i++)
    if (access(paths[i], F_OK) == 0)
      return xq_err_set(eb, XQ_EIO, "%s already exists (use --force to replace the pair)",
                        paths[i]);
  if (zmq_curve_keypair(pub, sec) != 0)
    return xq_err_set(eb, XQ_EIO, "zmq_curve_keypair: %s", zmq_strerror(errno));
  int rc = write_key_file(sec_path, sec, 0600, force, eb);
  if (rc == 0) rc = write_key_file(pub_path, pub, 0644, force, eb);
  memset(sec, 0, sizeof sec);
  if (rc < 0) return rc;
  memcpy(public_out, pub, sizeof pub);
  return 0;
}

int xq_curve_read_key(const char *path, char key[41], xq_errbuf_t *eb) {
  unsigned char *data = NULL;
  size_t size = 0;
  int rc = xq_read_file(path, 4096, &data, &size, eb);
  if (rc < 0) return rc;
  key[0] = '\0';
  char *save = NULL;
  for (char *line = strtok_r((char *)data, "\r\n", &save); line;
       line = strtok_r(NULL, "\r\n", &save)) {
    while (*line == ' ' || *line == '\t') line++;
    size_t n = strlen(line);
    while (n && (line[n - 1] == ' ' || line[n - 1] == '\t')) line[--n] = '\0';
    /* '#' is a Z85 digit: a line is the key when it decodes as one, and only otherwise
     * may it be a comment. */
    if (z85_key_valid(line)) {
      memcpy(key, line, XQ_Z85_KEY_LEN + 1);
      break;
    }
    if (!*line || *line == '#') continue;
    break;
  }
  free(data);
  if (!key[0])
    return xq_err_set(eb, XQ_EFORMAT, "%s: no valid CURVE key (expected one line of 40 Z85"
                      " characters, as written by `xqz keygen`)", path);
  return 0;
}

static int load_secret(xq_curve_t *c, const char *secret_file, xq_errbuf_t *eb) {
  int rc = xq_curve_read_key(secret_file, c->secret_key, eb);
  if (rc < 0) return rc;
  if (zmq_curve_public(c->public_key, c->secret_key) != 0)
    return xq_err_set(eb, XQ_EFORMAT, "%s: not a CURVE secret key", secret_file);
  return 0;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

int xq_curve_client_load(xq_curve_t *c, const char *server_pub_file, const char *secret_file,
                         xq_errbuf_t *eb) {
  memset(c, 0, sizeof *c);
  bool have_server = server_pub_file && server_pub_file[0];
  bool have_secret = secret_file && secret_file[0];
  if (!have_server && !have_secret) return 0;
  if (have_server != have_secret)
    return xq_err_set(eb, XQ_EINVAL, "CURVE needs both the server's public key (--server-key)"
                      " and this client's secret key (--key)");
  if (ends_with(server_pub_file, ".secret") || ends_with(secret_file, ".pub"))
    return xq_err_set(eb, XQ_EINVAL, "CURVE key files swapped (--server-key %s, --key %s):"
                      " --server-key takes the coordinator's public key (.pub), --key this"
                      " client's secret key (.secret)", server_pub_file, secret_file);
  if (!xq_curve_available())
    return xq_err_set(eb, XQ_EINVAL, "this libzmq was built without CURVE (libsodium)");
  int rc = xq_curve_read_key(server_pub_file, c->server_public, eb);
  if (rc == 0) rc = load_secret(c, secret_file, eb);
  if (rc < 0) return rc;
  c->on = true;
  return 0;
}

int xq_curve_server_load(xq_curve_t *c, const char *secret_file, xq_errbuf_t *eb) {
  memset(c, 0, sizeof *c);
  if (!secret_file || !secret_file[0]) return 0;
  if (!xq_curve_available())
    return xq_err_set(eb, XQ_EINVAL, "this libzmq was built without CURVE (libsodium)");
  int rc = load_secret(c, secret_file, eb);
  if (rc < 0) return rc;
  c->on = true;
  return 0;
}

int xq_curve_apply_client(void *sock, const xq_curve_t *c, xq_errbuf_t *eb) {
  if (!c || !c->on) return 0;
  if (zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, c->server_public, XQ_Z85_KEY_LEN + 1) ||
      zmq_setsockopt(sock, ZMQ_CURVE_PUBLICKEY, c->public_key, XQ_Z85_KEY_LEN + 1) ||
      zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, c->secret_key, XQ_Z85_KEY_LEN + 1))
    return xq_err_set(eb, XQ_EIO, "CURVE client options: %s", zmq_strerror(errno));
  return 0;
}

int xq_curve_apply_server(void *sock, const xq_curve_t *c, xq_errbuf_t *eb) {
  if (!c || !c->on) return 0;
  int one = 1;
  if (zmq_setsockopt(sock, ZMQ_CURVE_SERVER, &one, sizeof one) ||
      zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, c->secret_key, XQ_Z85_KEY_LEN + 1))
    return xq_err_set(eb, XQ_EIO, "CURVE server options: %s", zmq_strerror(errno));
  return 0;
}
