"""Function words of the four languages engram's users write in, as one table.

Taken from the Snowball project's stop lists (snowballstem.org, BSD licence), trimmed to
words that carry no topic: articles, pronouns, prepositions, conjunctions, auxiliary and
modal verb forms, and the commonest adverbs. A word is listed in its accented form and
lowercase; :mod:`engram.search.analysis` compares after the same normalization.
"""

from __future__ import annotations

from typing import Final

__all__ = ["STOP_WORDS"]

_ENGLISH = """
a about above after again against all am an and any are aren't as at be because been before
being below between both but by can can't cannot could couldn't did didn't do does doesn't
doing don't down during each few for from further had hadn't has hasn't have haven't having he
he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if
in into is isn't it it's its itself let's me more most mustn't my myself no nor not of off on
once only or other ought our ours ourselves out over own same shan't she she'd she'll she's
should shouldn't so some such than that that's the their theirs them themselves then there
there's these they they'd they'll they're they've this those through to too under until up
very was wasn't we we'd we'll we're we've were weren't what what's when when's where where's
which while who who's whom why why's with won't would wouldn't you you'd you'll you're you've
your yours yourself yourselves also just will shall may might must
"""

_FRENCH = """
au aux avec ce ces dans de des du elle en et eux il ils je la le les leur lui ma mais me même
mes moi mon ne nos notre nous on ou par pas pour qu que qui sa se ses son sur ta te tes toi ton
tu un une vos votre vous c d j l à m n s t y été étée étées étés étant étante étants étantes
suis es est sommes êtes sont serai seras sera serons serez seront serais serait serions seriez
seraient étais était étions étiez étaient fus fut fûmes fûtes furent sois soit soyons soyez
soient fusse fusses fût fussions fussiez fussent ayant ayante ayantes ayants eu eue eues eus ai
as avons avez ont aurai auras aura aurons aurez auront aurais aurait aurions auriez auraient
avais avait avions aviez avaient eut eûmes eûtes eurent aie aies ait ayons ayez aient eusse
eusses eût eussions eussiez eussent comment quand quoi où est-ce cette cet ceci cela ça
"""

_GERMAN = """
aber alle allem allen aller alles als also am an ander andere anderem anderen anderer anderes
anderm andern anderr anders auch auf aus bei bin bis bist da damit dann der den des dem die das
dass daß derselbe derselben denselben desselben demselben dieselbe dieselben dasselbe dazu dein
deine deinem deinen deiner deines denn derer dessen dich dir du dies diese diesem diesen dieser
dieses doch dort durch ein eine einem einen einer eines einig einige einigem einigen einiger
einiges einmal er ihn ihm es etwas euer eure eurem euren eurer eures für gegen gewesen hab habe
haben hat hatte hatten hier hin hinter ich mich mir ihr ihre ihrem ihren ihrer ihres euch im in
indem ins ist jede jedem jeden jeder jedes jene jenem jenen jener jenes jetzt kann kein keine
keinem keinen keiner keines können könnte machen man manche manchem manchen mancher manches mein
meine meinem meinen meiner meines mit muss musste nach nicht nichts noch nun nur ob oder ohne
sehr sein seine seinem seinen seiner seines selbst sich sie ihnen sind so solche solchem
solchen solcher solches soll sollte sondern sonst über um und uns unsere unserem unseren unser
unseres unter viel vom von vor während war waren warst was weg weil weiter welche welchem
welchen welcher welches wenn werde werden wie wieder will wir wird wirst wo wollen wollte würde
würden zu zum zur zwar zwischen wann warum wer wessen wem wen
"""

_PORTUGUESE = """
a à ao aos aquela aquelas aquele aqueles aquilo as às até com como da das de dela delas dele
deles depois do dos e é ela elas ele eles em entre era eram éramos essa essas esse esses esta
está estamos estão estar estas estava estavam estávamos este esteja estejam estejamos estes
esteve estive estivemos estiver estivera estiveram estivéramos estiverem estivermos estivesse
estivessem estivéssemos estou eu foi fomos for fora foram fôramos forem formos fosse fossem
fôssemos fui há haja hajam hajamos hão havemos haver hei houve houvemos houver houvera houverá
houveram houvéramos houverão houverei houverem houveremos houveria houveriam houveríamos
houvermos houvesse houvessem houvéssemos isso isto já lhe lhes mais mas me mesmo meu meus minha
minhas muito na não nas nem no nos nós nossa nossas nosso nossos num numa o os ou para pela
pelas pelo pelos por qual quando que quem são se seja sejam sejamos sem ser será serão serei
seremos seria seriam seríamos seu seus só somos sou sua suas também te tem tém temos tenho terá
terão terei teremos teria teriam teríamos teu teus teve tinha tinham tínhamos tive tivemos
tiver tivera tiveram tivéramos tiverem tivermos tivesse tivessem tivéssemos tu tua tuas um uma
você vocês vos onde porque
"""

#: Stop words by language (``en``, ``fr``, ``de``, ``pt``).
STOP_WORDS: Final[dict[str, frozenset[str]]] = {
    "en": frozenset(_ENGLISH.split()),
    "fr": frozenset(_FRENCH.split()),
    "de": frozenset(_GERMAN.split()),
    "pt": frozenset(_PORTUGUESE.split()),
}
