"""A little TAP producer for the client tests: ok/not ok lines, then the plan."""
import sys
import traceback


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, name, diag=None):
        self.n += 1
        print(f"{'ok' if cond else 'not ok'} {self.n} - {name}", flush=True)
        if not cond:
            self.failed += 1
            if diag is not None:
                for line in str(diag).splitlines():
                    print(f"# {line}", flush=True)
        return cond

    def eq(self, got, expected, name):
        return self.ok(got == expected, name, f"got:      {got!r}\nexpected: {expected!r}")

    def eq_of(self, fn, expected, name):
        """eq on fn()'s result; an exception from fn fails this test only."""
        try:
            got = fn()
        except Exception as e:
            return self.ok(False, name, f"{type(e).__name__}: {e}")
        return self.eq(got, expected, name)

    def run(self, main):
        """Run main(self); an exception is one more failed test. Then the plan."""
        try:
            main(self)
        except Exception:
            self.ok(False, "no exception", traceback.format_exc())
        print(f"1..{self.n}", flush=True)
        sys.exit(1 if self.failed else 0)
