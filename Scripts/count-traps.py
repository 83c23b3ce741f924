#!/usr/bin/env python3
"""Counts the places Swift traps by design in Swift sources: force unwraps (postfix !), try!,
as!, fatalError, precondition and preconditionFailure, leaving out comments and string literals
(issue 42 reports the count before and after). Usage: python3 Scripts/count-traps.py DIR... ;
V=-v lists each place."""
import re, sys, os
def strip(src):
    out=[]; i=0; n=len(src)
    while i<n:
        c=src[i]
        if src.startswith('//',i):
            j=src.find('\n',i); j=n if j<0 else j; out.append(' '*(j-i)); i=j; continue
        if src.startswith('/*',i):
            j=src.find('*/',i+2); j=n if j<0 else j+2; out.append(re.sub(r'[^\n]',' ',src[i:j])); i=j; continue
        if src.startswith('"""',i):
            j=src.find('"""',i+3); j=n if j<0 else j+3; out.append(re.sub(r'[^\n]',' ',src[i:j])); i=j; continue
        if c=='"':
            j=i+1; depth=0
            while j<n and src[j]!='\n':
                if src[j]=='\\' and j+1<n and src[j+1]=='(':
                    # interpolation: skip to matching paren (keep content)
                    k=j+2; d=1
                    while k<n and d: 
                        d+= {'(':1,')':-1}.get(src[k],0); k+=1
                    j=k; continue
                if src[j]=='\\': j+=2; continue
                if src[j]=='"': j+=1; break
                j+=1
            out.append(' '*(j-i)); i=j; continue
        out.append(c); i+=1
    return ''.join(out)
pat=re.compile(r'(?<=[\w\)\]\}])!(?!=)|\btry!|\bas!|\bfatalError\(|\bpreconditionFailure\(|\bprecondition\(|\bunsafelyUnwrapped\b')
total=0; per={}
for root in sys.argv[1:]:
    for dp,_,fs in os.walk(root):
        for f in fs:
            if not f.endswith('.swift'): continue
            p=os.path.join(dp,f); s=strip(open(p).read())
            for ln,line in enumerate(s.split('\n'),1):
                for m in pat.finditer(line):
                    total+=1; per.setdefault(p,[]).append((ln,m.group()))
if '-v' in os.environ.get('V',''):
    for p,v in sorted(per.items()):
        for ln,g in v: print(f"{p}:{ln}: {g}")
for p,v in sorted(per.items(), key=lambda x:-len(x[1])): print(len(v),p)
print('total',total)
