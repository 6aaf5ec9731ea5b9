/* The provider's own image: the static payload alone is a sufficient root
 * filesystem. We write the tar by hand (ustar), import it through the
 * Engine API and tag it by the payload's sha256, so it is reused while the
 * payload is unchanged. Nothing is ever pulled from a registry. */
#include "providers/gvisor/gvisor.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/cleanup.h"
#include "base/http.h"
#include "base/util.h"

#define TAR_BLOCK 512
/* A payload larger than this is not the small static observer. */
#define MAX_PAYLOAD (64u << 20)

struct tar_buf {
	char *data;
	size_t len, cap;
};

static int tar_reserve(struct tar_buf *t, size_t n)
{
	return agsbx_buf_reserve(&t->data, &t->cap, t->len + n, 16384, SIZE_MAX);
}

/* width-1 zero-padded octal digits and a NUL (values never exceed it:
 * the payload is capped far below 8 GiB). */
static void octal(char *field, size_t width, unsigned long long v)
{
	field[width - 1] = '\0';
	for (size_t i = width - 1; i-- > 0; v >>= 3)
		field[i] = (char)('0' + (v & 7));
}

/* One ustar header (name < 100 bytes) followed by data padded to 512. */
static int tar_entry(struct tar_buf *t, const char *name, unsigned mode, char type, const void *data, size_t len)
{
	if (strlen(name) >= 100)
		return -ENAMETOOLONG;
	size_t padded = (len + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
	int r = tar_reserve(t, TAR_BLOCK + padded);
	if (r < 0)
		return r;
	unsigned char *h = (unsigned char *)t->data + t->len;
	memset(h, 0, TAR_BLOCK);
	memcpy(h, name, strlen(name));
	octal((char *)h + 100, 8, mode);
	octal((char *)h + 108, 8, 0);        /* uid root */
	octal((char *)h + 116, 8, 0);        /* gid root */
	octal((char *)h + 124, 12, len);
	octal((char *)h + 136, 12, 0);       /* mtime 0: reproducible */
	h[156] = (unsigned char)type;
	memcpy(h + 257, "ustar", 6);         /* magic "ustar\0" */
	memcpy(h + 263, "00", 2);            /* version */
	memcpy(h + 265, "root", 4);
	memcpy(h + 297, "root", 4);
	/* Checksum: sum of header bytes with the field itself as spaces. */
	memset(h + 148, ' ', 8);
	unsigned sum = 0;
	for (int i = 0; i < TAR_BLOCK; i++)
		sum += h[i];
	octal((char *)h + 148, 7, sum); /* 6 digits, NUL, then the space */
	h[155] = ' ';
	t->len += TAR_BLOCK;
	if (len) {
		memcpy(t->data + t->len, data, len);
		memset(t->data + t->len + len, 0, padded - len);
		t->len += padded;
	}
	return 0;
}

int gv_image_tar(const void *payload, size_t len, char **tar, size_t *tar_len)
{
	static const struct { const char *name; unsigned mode; } dirs[] = {
		{ "agsbx/", 0755 }, { "agsbx/source/", 0755 }, { "agsbx/build/", 0755 },
		{ "agsbx/output/", 0755 }, { "agsbx/logs/", 0755 }, { "dev/", 0755 },
		{ "etc/", 0755 }, { "proc/", 0555 }, { "sys/", 0555 }, { "tmp/", 01777 },
	};
	struct tar_buf t = { 0 };
	int r = 0;
	for (size_t i = 0; i < AGSBX_ARRAY_SIZE(dirs) && r == 0; i++)
		r = tar_entry(&t, dirs[i].name, dirs[i].mode, '5', NULL, 0);
	if (r == 0)
		r = tar_entry(&t, GV_IMAGE_PAYLOAD + 1, 0755, '0', payload, len);
	/* End of archive: two zero blocks. */
	if (r == 0 && (r = tar_reserve(&t, 2 * TAR_BLOCK)) == 0) {
		memset(t.data + t.len, 0, 2 * TAR_BLOCK);
		t.len += 2 * TAR_BLOCK;
	}
	if (r < 0) {
		free(t.data);
		return r;
	}
	*tar = t.data;
	*tar_len = t.len;
	return 0;
}

int gv_image_present(const struct gv_docker *d, const char *name, bool *exists, struct agsbx_error *fail)
{
	_cleanup_free_ char *esc = gv_url_escape(name);
	_cleanup_free_ char *path = NULL;
	if (!esc || asprintf(&path, "/images/%s/json", esc) < 0)
		return -ENOMEM;
	long status;
	char err[512] = "";
	int r = gv_docker_call(d, "GET", path, NULL, 0, &status, NULL, err, sizeof err);
	if (r < 0 || (status != 200 && status != 404)) {
		/* err holds the transport's or Docker's message */
		agsbx_error_set(fail, GV_R_IMAGE_MISSING, "%s", err);
		return r < 0 ? r : -EPROTO;
	}
	*exists = status == 200;
	return 0;
}

/* POST /images/create?fromSrc=- answers 200 with a JSON-lines progress
 * stream; a failure is a line carrying "error". */
int gv_image_import_failed(const char *body, size_t len, struct agsbx_error *fail)
{
	const char *p = body, *end = body + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		json_t *j = json_loadb(p, n, 0, NULL);
		const char *e = json_string_value(json_object_get(j, "error"));
		if (e) {
			agsbx_error_set(fail, GV_R_IMAGE_MISSING, "image import failed: %s", e);
			json_decref(j);
			return -EIO;
		}
		json_decref(j);
		p += n + 1;
	}
	return 0;
}

static int image_import(const struct gv_docker *d, const char *tag, const char *tar, size_t tar_len,
			struct agsbx_error *fail)
{
	_cleanup_free_ char *url = NULL;
	if (asprintf(&url, "http://docker%s/images/create?fromSrc=-&repo=%s&tag=%s", d->prefix, GV_IMAGE_REPO,
		     tag) < 0)
		return -ENOMEM;
	struct agsbx_http_request req = {
		.unix_socket = d->socket,
		.method = "POST",
		.url = url,
		.content_type = "application/x-tar",
		.body = tar,
		.body_len = tar_len,
		.timeout_ms = 60000,
		.max_response = 1u << 20,
	};
	struct agsbx_http_response resp;
	int r = agsbx_http(&req, &resp);
	if (r < 0) {
		agsbx_error_set(fail, GV_R_IMAGE_MISSING, "image import: %s",
				resp.error[0] ? resp.error : strerror(-r));
	} else if (resp.status != 200) {
		agsbx_error_set(fail, GV_R_IMAGE_MISSING, "image import: HTTP %ld: %.200s", resp.status, resp.body);
		r = -EIO;
	} else {
		r = gv_image_import_failed(resp.body, resp.len, fail);
	}
	agsbx_http_response_clear(&resp);
	return r;
}

/* The image check, cached per process (one collect run): a collect verifies
 * the chain four times or more (probe, ensure, probe.truthful's second
 * probe, lifecycle.consistent's ensure). Valid while the daemon socket and
 * the payload file are unchanged (inode fingerprint: any write moves its
 * ctime); an image removed meanwhile still fails closed at container create. */
struct image_cache {
	bool valid;
	char socket[256];
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
	struct gv_image img;
};
static struct image_cache cache;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static bool same_file(const struct image_cache *c, const struct stat *st)
{
	return c->dev == st->st_dev && c->ino == st->st_ino && c->size == st->st_size &&
	       c->mtime.tv_sec == st->st_mtim.tv_sec && c->mtime.tv_nsec == st->st_mtim.tv_nsec &&
	       c->ctime.tv_sec == st->st_ctim.tv_sec && c->ctime.tv_nsec == st->st_ctim.tv_nsec;
}

static bool cache_get(const struct gv_docker *d, const struct stat *st, struct gv_image *img)
{
	pthread_mutex_lock(&cache_lock);
	bool hit = cache.valid && strcmp(cache.socket, d->socket) == 0 && same_file(&cache, st);
	if (hit) {
		*img = cache.img;
		img->imported = false;
	}
	pthread_mutex_unlock(&cache_lock);
	return hit;
}

static void cache_put(const struct gv_docker *d, const struct stat *st, const struct gv_image *img)
{
	pthread_mutex_lock(&cache_lock);
	cache = (struct image_cache){ .valid = strlen(d->socket) < sizeof cache.socket, .dev = st->st_dev,
				      .ino = st->st_ino, .size = st->st_size, .mtime = st->st_mtim,
				      .ctime = st->st_ctim, .img = *img };
	snprintf(cache.socket, sizeof cache.socket, "%s", d->socket);
	pthread_mutex_unlock(&cache_lock);
}

static int image_check(const struct gv_docker *d, const char *payload_path, struct gv_image *img,
		       struct agsbx_error *fail);

int gv_image_ensure(const struct gv_docker *d, const char *payload_path, struct gv_image *img, struct agsbx_error *fail)
{
	memset(img, 0, sizeof *img);
	struct stat before, after;
	bool fp = payload_path && stat(payload_path, &before) == 0;
	if (fp && cache_get(d, &before, img))
		return 0;
	int r = image_check(d, payload_path, img, fail);
	/* Cached only when the file did not move while it was read. */
	if (r == 0 && fp && stat(payload_path, &after) == 0 && same_file(&(struct image_cache){ .dev = before.st_dev,
		.ino = before.st_ino, .size = before.st_size, .mtime = before.st_mtim, .ctime = before.st_ctim }, &after))
		cache_put(d, &before, img);
	return r;
}

static int image_check(const struct gv_docker *d, const char *payload_path, struct gv_image *img,
		       struct agsbx_error *fail)
{
	if (!payload_path) {
		agsbx_error_set(fail, GV_R_IMAGE_MISSING,
				"no payload path: the image is built from the static payload");
		return -ENOENT;
	}
	/* Read once, hash and archive the same bytes: the tag names exactly
	 * what was imported. */
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	int r = agsbx_read_file(payload_path, MAX_PAYLOAD, &data, &len);
	if (r < 0) {
		agsbx_error_set(fail, GV_R_IMAGE_MISSING, "cannot read payload %s: %s", payload_path, strerror(-r));
		return r;
	}
	agsbx_sha256_hex(data, len, img->payload_sha256);
	snprintf(img->tag, sizeof img->tag, "%.*s", GV_IMAGE_TAG_HEX, img->payload_sha256);
	snprintf(img->name, sizeof img->name, "%s:%s", GV_IMAGE_REPO, img->tag);
	bool exists = false;
	r = gv_image_present(d, img->name, &exists, fail);
	if (r < 0)
		return r;
	if (exists)
		return 0;
	_cleanup_free_ char *tar = NULL;
	size_t tar_len = 0;
	r = gv_image_tar(data, len, &tar, &tar_len);
	if (r < 0) {
		agsbx_error_set(fail, GV_R_IMAGE_MISSING, "cannot build the image archive: %s", strerror(-r));
		return r;
	}
	r = image_import(d, img->tag, tar, tar_len, fail);
	if (r < 0)
		return r;
	r = gv_image_present(d, img->name, &exists, fail);
	if (r < 0)
		return r;
	if (!exists) {
		agsbx_error_set(fail, GV_R_IMAGE_MISSING, "image %s absent after a successful import", img->name);
		return -ENOENT;
	}
	img->imported = true;
	return 0;
}
