"""Common given names and surnames, lower case, for :mod:`anonaudit.measures.identifiers`.

A short list written by hand (not drawn from any test data generator) after the lists
of the most frequent names that statistics offices publish: given names and surnames
of the United States, the United Kingdom, Germany, France, Spain, Italy, the
Netherlands and Brazil (about a hundred surnames for each), some 1,200 in all. It tells
a column of people's names from one of other capitalised words (places, varieties,
products) and finds names in free text ("John Miller reports..."). It need not be
complete, only hold the names that most people have. Words that are more often
something else than a name in a table or a note ("Will", "May", "Mark", "Grant",
"Rose", "Bill", "Max", "Grace", "Iris", "Amber", "Dawn", "Frank", "Dean", "Jordan",
"Madison", "Green", "Brown", "White", "Young", "King", "Long") are left out.
"""

from __future__ import annotations

__all__ = ["GIVEN_NAMES", "SURNAMES"]

_GIVEN = """
aaron abigail adam adrian adriana agnes ahmed aidan alan albert alberto alejandro
alessandro alessia alex alexander alexandra alexis alfred alfredo ali alice alicia alison
allison alyssa amanda amelia amy ana andre andrea andreas andrew andrés angela
angelo ann anna anne annette anthony antoine antonio ashley audrey barbara beatriz
benjamin bernard bert bethany betty beverly brandon brenda brian brittany bruno bryan
camille carl carla carlos carmen carol caroline carolyn catherine cecilia charles
charlotte chiara chloe christian christina christine christopher cindy claire clara
claudia clément cody colin connor cynthia daan dale daniel daniela danielle david
deborah debra denise dennis derek diana diane diego dirk dominic donald donna
doris dorothy douglas dylan edward elena eleanor elif elisa elisabeth elizabeth ella
ellen emily emma eric erica erik erin ernst esther ethan eugene eva evelyn fabian
fatima felix fernando florian frances francesca francesco francisco franz
gabriel gabriele gabriela gary george gerald gerard gerhard gina giorgio giovanni
giulia giuseppe gloria gregory günter hannah hans harold harry heather heinz
helen helena helmut henry hugo ian isabel isabella isabelle jack jacob jacqueline
jakob james jamie jan jane janet janice jason javier jean jeffrey jennifer jeremy
jerry jesse jessica jesús joan joanna joe john jonathan jorge josé joseph
joshua joyce juan judith judy julia julian julie julien jürgen justin karen karl
katharina katherine kathleen kathryn katie kayla keith kelly kenneth kevin kimberly
klaus kyle laura lauren lawrence leah lena leon leonardo linda lisa lorenzo louis
louise luca lucas lucía luis luisa luiz lukas luke manuel manuela marc marco
margaret maria mariana marie marina mario marion martha martin mary mathieu matteo
matthew matthias maurice maximilian megan melanie melissa michael michel michelle
miguel mohammed monica monika nancy natalie nathan nathalie nicholas nicole noah
nora olivia oscar pablo pamela paola patricia patrick paul paula pedro peter petra
philip philippe pierre rachel rafael raymond rebecca richard robert roberto roger
ronald rosa ruth ryan samantha samuel sandra sara sarah scott sean sebastian sergio
sharon shirley sophia sophie stefan stefano stephanie stephen steven susan sven
sylvia tammy teresa theresa thomas tiffany timothy tom tyler ursula valentina
valeria vanessa vincent virginia walter wayne werner william wolfgang yvonne zachary
"""
_GIVEN += """
ada adele adolf agustín ahmet aldo alessio alicia alina alois amélie andré andreas
anja anke annika antje antonella aurélie axel bärbel bart beate benedikt bernd
bettina birgit bram brigitte carina carlo carsten cesare christa christel christoph
claude claus cor cornelia corinne cristina cristian dagmar daniele davide dennis
detlef dieter dietmar dolores domenico donatella dorothea edith eduardo elias elke
elisa elsa emilio enrico enzo erika ernesto esperanza eugenio evi fabio federica
federico felipe fernanda filippo fleur franco françoise frederik frieda friedrich
gaëlle gerrit gert gianluca gianni gilbert gilles gisela giuliana gonzalo greta
guido guillaume gustavo hanna hannelore heike heinrich helga henk herbert hermann
hilde horst hubert ignacio ilse inès inge ingrid irene isabelle ivo jaap
jacques jannik jens jeroen jesper joachim johan johann johanna johannes jonas joop
jordi josefa josep joost jörg jose josé julio jutta kai karin katja kerstin
kim koen lars laurent laurens leonie leticia lieke lina lotte lucia luigi lukas
lutz maarten manfred marcel marcelo marcus margarethe mariano marianne marieke
marijke mariska marius markus marta marten martina massimo mathilde matías
mauro meike michela michele milan mirjam mónica monique nadine nathalie nicola
nicolas niels nils noël olga oliver otto pascal pasquale patrizia pauline pieter
pilar pietro rainer ralf ramón raúl regina reinhard remco renate rené ricardo rita
rocco rodrigo roland rolf romy rosalia rosario rudolf ruud sabine sabrina
salvatore sander sandro santiago saskia serena silke silvia simone sofia sonia stefanie
susanne sylvie thierry thijs thomas thorsten tim tobias ulrich ulrike uta uwe valentin
valérie vera veronica victor vincenzo viola vittorio volker wiebke wilhelm willem
wim xavier yannick yvette
"""

_SURNAMES = """
adams allen alvarez anderson bailey baker bakker barnes becker bell bennett bernard
bertrand bianchi brooks bruno butler campbell carter castillo castro clark colombo
collins cook cooper costa cox cruz davies davis diaz dubois dupont durand
edwards evans fernandes fernández ferrari fischer fisher flores foster garcia garcía
gomes gomez gómez gonzalez gonzález gray greco griffin hall harris hernandez
hernández hill hoffmann howard hughes jackson janssen jenkins jimenez johnson jones
kelly klein koch kowalski lambert lee leroy lewis lima lopez lópez lombardi marino
martin martinez martínez meyer miller mitchell moore morales moreau morgan morris
müller murphy nelson nguyen oliveira ortiz parker patel perez pérez perry peters
peterson petit phillips powell price ramirez reed reyes ricci richard richardson
rivera roberts robinson rodrigues rodriguez rodríguez rogers romano rossi roux ruiz
russo sanchez sánchez santos schmidt schmitz schneider schulz schwarz scott silva
simon smit smith sousa stewart sullivan taylor thomas thompson torres turner visser
wagner walker ward watson weber wilson wood wright zimmermann
"""
_SURNAMES += """
müller schmidt schneider fischer weber meyer wagner becker schulz hoffmann schäfer koch
bauer richter klein wolf schröder neumann schwarz zimmermann braun krüger hofmann
hartmann lange schmitt werner schmitz krause meier lehmann schmid schulze maier köhler
herrmann könig mayer huber kaiser fuchs peters lang scholz möller weiß jung hahn
schubert vogel friedrich keller günther berger winkler roth beck lorenz baumann
franke albrecht schuster ludwig böhm winter kraus schumacher krämer vogt stein jäger
otto sommer groß seidel heinrich brandt haas schreiber graf schulte dietrich ziegler
kuhn kühn pohl engel horn busch bergmann voigt sauer arnold wolff pfeiffer
rodríguez gonzález fernández lópez martínez sánchez pérez gómez martín jiménez ruiz
hernández díaz moreno muñoz álvarez romero alonso gutiérrez navarro torres domínguez
vázquez ramos gil ramírez serrano blanco molina morales suárez ortega delgado castro
ortiz rubio marín sanz núñez iglesias medina garrido cortés castillo santos lozano
guerrero cano prieto méndez cruz calvo gallego vidal león márquez herrera peña flores
cabrera campos vega fuentes carrasco díez caballero reyes nieto aguilar pascual
santana herrero lorenzo montero hidalgo giménez ibáñez ferrer durán santiago benítez
mora vicente vargas arias carmona crespo román pastor soto sáez velasco moya soler
parra esteban bravo gallardo rojas
rossi russo ferrari esposito bianchi romano colombo ricci marino greco bruno gallo
conti mancini costa giordano rizzo lombardi moretti barbieri fontana santoro mariani
rinaldi caruso ferrara galli martini leone longo gentile martinelli vitale lombardo
serra coppola marchetti parisi villa conte ferraro ferri fabbri bianco marini grasso
valentini messina sala gatti pellegrini palumbo sanna farina rizzi monti cattaneo
morelli amato silvestri mazza testa grassi pellegrino carbone giuliani benedetti
barone rossetti caputo montanari guerra palmieri bernardi martino fiore ferretti
bellini basile riva donati piras vitali battaglia sartori neri costantini milani
pagano ruggiero sorrentino orlando negri
jansen janssen visser smit meijer mulder bos vos hendriks dekker brouwer dijkstra
smits kok jacobs vermeulen schouten willems hoekstra maas verhoeven koster prins blom
huisman peeters kuipers kuiper veenstra kramer scholten postma martens vink
timmermans groen gerritsen jonker willemsen smeets bosch schipper koning driessen
hermans evers hofman bosman wolters sanders mol kuijpers molenaar verbeek
berg dijk vries jong groot boer wit graaf meer linden haan heuvel veen broek bruijn
heijden beek vliet leeuwen wal wijk ruiter loon velde velden doorn meulen horst
lefebvre laurent michel roux david morel fournier girard lambert fontaine rousseau
lefèvre faure andré mercier guérin garnier chevalier françois legrand gauthier
perrin robin clément morin henry roussel mathieu gautier masson marchand duval denis
dumont lemaire noël dufour meunier brun blanchard giraud joly rivière lucas brunet
gaillard barbier gérard roche renard roy colin caron picard roger aubert lemoine
renaud dumas lacroix olivier philippe bourgeois benoît rey leclerc rolland
leclercq guillaume lecomte dupuy guillot hubert carpentier dupuis moulin deschamps
huet vasseur boucher fleury royer jacquet poirier marty aubry guyot carré renault
charpentier ménard maillard baron bertin bailly hervé collet léger bouvier julien
prévost millet perrot cousin germain breton besson langlois rémy pelletier lévêque
perrier leblanc barré lebrun marchal mallet hamon boulanger monnier michaud

alonso álvarez arnaud aubert bauer benedetti blanc blanco bonnet bos boyer brandt
caron chevalier conti costa dekker delgado dijkstra dumont esposito fabbri
fabre faure fontana fournier francois gallo garnier gauthier gentile girard giordano
guerin günther hartmann hermann hofmann horn huber iglesias jansen kaiser keller
köhler krause krüger kuhn lange lehmann leroux lorenz ludwig mancini marchand
martini medina mercier meijer molina moreno moretti mulder navarro nicolas peeters
perrin pohl prins ramos richter rinaldi roussel rubio santoro schäfer schmid
schröder schulte serrano sommer vermeulen vidal vincent vos werner wolf ziegler
"""

#: Given names, lower case.
GIVEN_NAMES: frozenset[str] = frozenset(_GIVEN.split())
#: Surnames, lower case.
SURNAMES: frozenset[str] = frozenset(_SURNAMES.split())
