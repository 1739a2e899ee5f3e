struct dup { long b; char c; };
typedef struct dup dup_t;
enum sign2 { NEG = 3 };
struct bits { unsigned a:1, b:2, :3, c:7; unsigned long long d:40, e:24; char z; };
struct bits g_bits; struct dup g_dup2; dup_t g_dupt; enum sign2 g_s2;
