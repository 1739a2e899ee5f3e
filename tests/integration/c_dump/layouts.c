#include <stdarg.h>
struct dup { int a; };
typedef struct dup dup_t;
struct gaps { char c; long l:3; long :0; int i:5; short s; char tail; } __attribute__((aligned(16)));
struct __attribute__((packed)) pk { char c; int i; short s; };
struct pk2 { char c; struct pk p; long x; } __attribute__((packed));
struct holes { char a; char pad[3]; int b; long c; char d; };
enum sign { NEG = -5, POS = 7 };
enum big { HUGE = 0xffffffffffULL, SMALL = 1 };
enum { ANON_A = 1, ANON_B };
struct fwd_only;
struct nest {
	union { int u1; struct { short s1, s2; }; };
	struct { int x; } named_anon;
	enum { IN_A, IN_B } e;
	struct fwd_only *f;
	const volatile int cv;
	const char *const *pp;
	int (*fp)(int, ...);
	void (*(*ret_fp)(long))(int);
	int (*arr_fp[4])(void);
	char md[2][3][4];
	struct nest *self;
	int flex[];
};
typedef int (*handler_t)(struct nest *, va_list);
typedef handler_t handlers_t[3];
struct empty {};
struct uses { struct empty e; handlers_t h; dup_t d; struct gaps g; struct pk2 p; struct holes h2; enum sign s; enum big b; };
struct uses g_uses; struct nest g_nest; int g_anon = ANON_B;
int f(struct uses *u, ...) { return u->s; }
